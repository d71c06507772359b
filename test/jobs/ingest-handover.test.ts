// How ingest's jobs reach the workers: through the job outbox. The receipt statement NOTIFYs the new
// runnable jobs' ids at its commit, and the one listening worker's dispatcher runs them or hands them to BullMQ;
// the API does not talk to BullMQ at ingest. So: with no worker, an accepted delivery's jobs are rows
// and nothing in Redis; with a worker whose poll is a minute away, an event reaches the CRM in
// milliseconds; of two workers one listens and alone hands jobs over (running them itself while it
// has slots free, without BullMQ), and when its process dies or stalls the other takes over.
import { Queue } from "bullmq";
import { LISTENER_LOCK, SILENT_MS } from "../../src/jobs/outbox-listener.js";
import { OPERATION_SETTINGS, OPERATIONS } from "../../src/jobs/operations.js";
import { queuePrefix } from "../../src/queues/queue-names.js";
import { createTenant, OPERATOR_KEY, staticFormsToCrm } from "../support/admin.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { freePort } from "../support/process.js";
import { testRedis } from "../support/redis.js";
import { waitFor } from "../support/wait.js";

/**
 * A hand-over heard at the commit takes tens of ms. The workers spawned here poll once a minute
 * (DISPATCHER_INTERVAL_MS, 5 s by default), so a job left to the poll would take far longer than
 * this bound, which leaves a loaded machine seconds of slack.
 */
const HANDOVER_MS = 10_000;
const POLL_MS = "60000";

describe("ingest → workers: the job outbox", () => {
  const crm = useFakeServer({ status: 200, body: {} });
  /** The requests the CRM received at `path` (each test's connection delivers to its own). */
  const receivedAt = (path: string) => crm.received.filter((request) => request.path === path);
  const app = useApp({ env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY } });

  const queued = async () => {
    const redis = testRedis(app.config);
    const queues = OPERATIONS.map(
      (name) => new Queue(name, { connection: redis, prefix: queuePrefix(app.config, name) }),
    );
    try {
      const counts = await Promise.all(queues.map((queue) => queue.getJobCounts()));
      return counts.flatMap((count) => Object.values(count)).reduce((sum, n) => sum + n, 0);
    } finally {
      await Promise.all(queues.map((queue) => queue.close()));
      redis.disconnect();
    }
  };
  /** The backend pids holding the listener's lock. */
  const listeners = async () =>
    (
      await app.sql.query<{ pid: number }>(
        `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND objsubid = 1 AND ((classid::bigint << 32) | objid::bigint) = $1`,
        [LISTENER_LOCK],
      )
    ).rows.map((row) => row.pid);
  /** Milliseconds from a delivery's 202 to the CRM's receipt of it. */
  const handover = async (
    deliver: (id: string) => Promise<{ status: number; body: { receiptIds: string[] } }>,
    id: string,
  ) => {
    const answer = await deliver(id);
    expect(answer.status).toBe(202);
    const answered = Date.now();
    const [request] = await waitFor(
      () =>
        Promise.resolve(crm.received.filter((request) => request.body.includes(answer.body.receiptIds[0]!))),
      (found) => found.length === 1,
      10_000,
    );
    return request!.at - answered;
  };

  it("with no worker, an accepted delivery's jobs are rows in Postgres and nothing in BullMQ; a worker started later runs them", async () => {
    const tenant = await createTenant(app.url);
    const form = await staticFormsToCrm(tenant.admin, app.url, crm.url, "/no-worker");
    const answer = await form.deliver("no-worker-1");
    expect(answer.status).toBe(202);
    const { rows } = await app.sql.query<{ operation: string; status: string }>(
      "SELECT operation, status FROM jobs WHERE connection_id = $1 ORDER BY operation",
      [form.id],
    );
    expect(rows).toEqual([
      { operation: "crm-delivery", status: "waiting" },
      { operation: "lead-upsert", status: "queued" },
    ]);
    expect(await queued()).toBe(0);

    // The worker's first poll finds what was committed while no one listened.
    const worker = app.spawn("dist/worker.js", { DISPATCHER_INTERVAL_MS: "300" });
    await worker.waitFor(/worker started/);
    await waitFor(
      () => Promise.resolve(receivedAt("/no-worker").length),
      (n) => n === 1,
    );
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toEqual({ code: 0, signal: null });
  });

  /**
   * A worker process with a metrics port of its own: its hand-overs of committed jobs, read there
   * (`ranHere`: run by itself; `enqueued`: handed to BullMQ; `committed`: both).
   */
  const spawnWorker = async (env: Record<string, string> = {}) => {
    const port = await freePort();
    const worker = app.spawn("dist/worker.js", {
      DISPATCHER_INTERVAL_MS: POLL_MS,
      ...env,
      WORKER_METRICS_PORT: String(port),
    });
    await worker.waitFor(/worker started/);
    const counter = async (pattern: RegExp) =>
      Number(pattern.exec(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text())?.[1] ?? 0);
    const handOvers = async () => ({
      ranHere: await counter(/^leadgate_dispatcher_ran_here_total (\d+)/m),
      enqueued: await counter(/^leadgate_dispatcher_enqueued_total\{reason="committed"\} (\d+)/m),
    });
    /** Lead-upserts that found every slot of their operation taken (then waited, or went to BullMQ). */
    const slotsFull = () =>
      counter(/^leadgate_released_runs_no_slot_total\{operation="lead-upsert"\} (\d+)/m);
    const committed = async () => {
      const { ranHere, enqueued } = await handOvers();
      return ranHere + enqueued;
    };
    return { ...worker, committed, handOvers, slotsFull };
  };

  it("the listening worker runs committed jobs itself, without BullMQ, while it has slots free", async () => {
    const tenant = await createTenant(app.url);
    const form = await staticFormsToCrm(tenant.admin, app.url, crm.url, "/run-here");
    const worker = await spawnWorker();
    try {
      for (let round = 0; round < 3; round++) {
        expect(await handover((id) => form.deliver(id), `run-here-${round}`)).toBeLessThan(HANDOVER_MS);
      }
      // One job per event was runnable at its commit (the lead-upsert; its CRM delivery waited for it).
      expect(await worker.handOvers()).toEqual({ ranHere: 3, enqueued: 0 });
      // The CRM saw the third event before its answer reached the worker: its success is recorded next.
      const rows = await waitFor(
        async () =>
          (
            await app.sql.query<{ operation: string; status: string; attempts: number }>(
              "SELECT operation, status, attempts FROM jobs WHERE connection_id = $1 ORDER BY operation",
              [form.id],
            )
          ).rows,
        (jobs) => jobs.every((job) => job.status === "succeeded"),
      );
      expect(rows).toEqual([
        ...Array.from({ length: 3 }, () => ({ operation: "crm-delivery", status: "succeeded", attempts: 1 })),
        ...Array.from({ length: 3 }, () => ({ operation: "lead-upsert", status: "succeeded", attempts: 1 })),
      ]);
      expect(receivedAt("/run-here")).toHaveLength(3);
    } finally {
      worker.child.kill("SIGTERM");
      expect(await worker.exited).toEqual({ code: 0, signal: null });
    }
  });

  it("a committed job whose queue an operator paused goes to BullMQ, and runs once the queue is resumed", async () => {
    const tenant = await createTenant(app.url);
    const form = await staticFormsToCrm(tenant.admin, app.url, crm.url, "/paused");
    const redis = testRedis(app.config);
    const leadUpserts = new Queue("lead-upsert", {
      connection: redis,
      prefix: queuePrefix(app.config, "lead-upsert"),
    });
    await leadUpserts.pause();
    const worker = await spawnWorker();
    try {
      expect((await form.deliver("paused-1")).status).toBe(202);
      await waitFor(worker.handOvers, (counts) => counts.enqueued === 1);
      // A second event, handed over after the first: by then the worker was done with the first
      // (it did not run it here too), and it stayed in the paused queue while the second came.
      expect((await form.deliver("paused-2")).status).toBe(202);
      await waitFor(worker.handOvers, (counts) => counts.enqueued === 2);
      expect(await worker.handOvers()).toEqual({ ranHere: 0, enqueued: 2 });
      expect(await leadUpserts.getJobCounts("waiting", "active", "completed")).toEqual({
        waiting: 2,
        active: 0,
        completed: 0,
      });
      expect(receivedAt("/paused")).toEqual([]);

      await leadUpserts.resume();
      await waitFor(
        () => Promise.resolve(receivedAt("/paused").length),
        (n) => n === 2,
      );
    } finally {
      await leadUpserts.resume();
      await leadUpserts.close();
      redis.disconnect();
      worker.child.kill("SIGTERM");
      await worker.exited;
    }
  });

  /**
   * Fills the listening worker's 100 lead-upsert slots with runs that cannot end (a lock held on the
   * leads table stops their upserts), then delivers one event more, waits for `overflowed`, and lets
   * them all go: answers the ids of the 101 events. `leader` is the listening worker.
   */
  const overflowOneEvent = async (
    form: Awaited<ReturnType<typeof staticFormsToCrm>>,
    leader: Awaited<ReturnType<typeof spawnWorker>>,
    prefix: string,
    overflowed: () => Promise<unknown>,
  ) => {
    const slots = OPERATION_SETTINGS["lead-upsert"].concurrency;
    const lock = await app.sql.connect();
    try {
      await lock.query("BEGIN");
      await lock.query("LOCK TABLE leads IN SHARE MODE");
      const ids = Array.from({ length: slots + 1 }, (_, n) => `${prefix}-${n}`);
      const answers = await Promise.all(ids.slice(0, slots).map((id) => form.deliver(id)));
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 202));
      // Each holds a slot once its hand-over is counted (its run then waits for the lock).
      await waitFor(leader.handOvers, (counts) => counts.ranHere + counts.enqueued === slots);
      expect((await form.deliver(ids[slots])).status).toBe(202);
      await overflowed();
      await lock.query("COMMIT");
      return ids;
    } finally {
      await lock.query("ROLLBACK").catch(() => undefined);
      lock.release();
    }
  };

  it("a worker alone waits for a slot of its own: a committed job over its slots runs here too, not through BullMQ", async () => {
    const tenant = await createTenant(app.url);
    const form = await staticFormsToCrm(tenant.admin, app.url, crm.url, "/alone");
    // Its wait for a slot is long: the slots held must not count as slow runs (RELEASED_RUN_WAIT_MS)
    // however long the 101st event takes to reach the worker on a loaded machine.
    const worker = await spawnWorker({ RELEASED_RUN_WAIT_MS: "30000" });
    try {
      // The 101st found every slot taken (none frees while the lock is held) and waits for one.
      const ids = await overflowOneEvent(form, worker, "alone", () =>
        waitFor(worker.slotsFull, (n) => n === 1),
      );
      await waitFor(
        () => Promise.resolve(receivedAt("/alone").length),
        (n) => n === ids.length,
        30_000,
      );
      expect(await worker.handOvers()).toEqual({ ranHere: ids.length, enqueued: 0 });
      expect(await queued()).toBe(0);
    } finally {
      worker.child.kill("SIGTERM");
      expect(await worker.exited).toEqual({ code: 0, signal: null });
    }
  });

  it("with another worker, the listener hands a committed job it has no slot free for to BullMQ, and the other worker runs it", async () => {
    const tenant = await createTenant(app.url);
    const form = await staticFormsToCrm(tenant.admin, app.url, crm.url, "/shared");
    // A wait for a slot would last longer than the test waits below: a listener that waited would
    // not hand the 101st over while the lock holds all 100 slots.
    const first = await spawnWorker({ RELEASED_RUN_WAIT_MS: "30000" });
    const second = await spawnWorker();
    try {
      expect(first.output()).toMatch(/job outbox taken/);
      // The listener does not wait for a slot: it hands the 101st to BullMQ while the lock holds all 100.
      const ids = await overflowOneEvent(form, first, "shared", () =>
        waitFor(
          first.handOvers,
          (counts) => counts.ranHere + counts.enqueued === OPERATION_SETTINGS["lead-upsert"].concurrency + 1,
        ),
      );
      expect(await first.slotsFull()).toBe(1);
      expect(await first.handOvers()).toEqual({ ranHere: ids.length - 1, enqueued: 1 });
      await waitFor(
        () => Promise.resolve(receivedAt("/shared")),
        (requests) => requests.length === ids.length,
        30_000,
      );
      // Each event once; the one handed over ran in a BullMQ slot (the other worker's, or the listener's own).
      const events = receivedAt("/shared").map(
        (request) => (JSON.parse(request.body) as { data: { eventId: string } }).data.eventId,
      );
      expect(new Set(events).size).toBe(ids.length);
      expect(await second.handOvers()).toEqual({ ranHere: 0, enqueued: 0 });
    } finally {
      for (const worker of [first, second]) {
        worker.child.kill("SIGTERM");
        expect(await worker.exited).toEqual({ code: 0, signal: null });
      }
    }
  });

  it(`of two workers one listens and alone hands the jobs over; each event reaches the CRM within ${HANDOVER_MS} ms of its 202 (poll once a minute), after a kill -9 of the listener too`, async () => {
    const tenant = await createTenant(app.url);
    const form = await staticFormsToCrm(tenant.admin, app.url, crm.url, "/two-workers");
    const first = await spawnWorker();
    expect(first.output()).toMatch(/job outbox taken/);
    const [leader] = await listeners();
    expect(leader).toBeDefined();
    const second = await spawnWorker();
    expect(second.output()).not.toMatch(/job outbox taken/);
    expect(await listeners()).toEqual([leader]);

    for (let round = 0; round < 3; round++) {
      expect(await handover((id) => form.deliver(id), `two-workers-${round}`)).toBeLessThan(HANDOVER_MS);
    }
    expect(await first.committed()).toBeGreaterThanOrEqual(3);
    expect(await second.committed()).toBe(0);

    first.child.kill("SIGKILL");
    await first.exited;
    await second.waitFor(/job outbox taken/);
    const [taker] = await listeners();
    expect(taker).toBeDefined();
    expect(taker).not.toBe(leader);
    for (let round = 0; round < 3; round++) {
      expect(await handover((id) => form.deliver(id), `taken-over-${round}`)).toBeLessThan(HANDOVER_MS);
    }
    expect(await second.committed()).toBeGreaterThanOrEqual(3);
    expect(receivedAt("/two-workers")).toHaveLength(6);
    second.child.kill("SIGTERM");
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(await listeners()).toEqual([]);
  });

  it("a listener that stalls (its process stopped) loses the outbox to the other worker within SILENT_MS and a beat", async () => {
    const tenant = await createTenant(app.url);
    const form = await staticFormsToCrm(tenant.admin, app.url, crm.url, "/stalled");
    const first = await spawnWorker();
    expect(first.output()).toMatch(/job outbox taken/);
    const [leader] = await listeners();
    const second = await spawnWorker();
    first.child.kill("SIGSTOP");
    try {
      const stalled = Date.now();
      await second.waitFor(/job outbox taken/, SILENT_MS + 5_000);
      expect(Date.now() - stalled).toBeLessThan(SILENT_MS + 5_000);
      const [taker] = await listeners();
      expect(taker).not.toBe(leader);
      expect(await handover((id) => form.deliver(id), "stalled-1")).toBeLessThan(HANDOVER_MS);
      expect(await second.committed()).toBeGreaterThanOrEqual(1);
    } finally {
      first.child.kill("SIGKILL");
      await first.exited;
    }
  });
});
