// How ingest's jobs reach the workers: through the job outbox. The receipt statement NOTIFYs the new
// runnable jobs' ids at its commit, and the one listening worker's dispatcher hands them to BullMQ;
// the API does not talk to BullMQ at ingest. So: with no worker, an accepted delivery's jobs are rows
// and nothing in Redis; with a worker and the poll at its default 5 s, an event reaches the CRM well
// within a second of its 202; of two workers one listens, and when its process dies the other takes over.
import { Queue } from "bullmq";
import { LISTENER_LOCK } from "../../src/jobs/outbox-listener.js";
import { OPERATIONS } from "../../src/jobs/operations.js";
import { queuePrefix } from "../../src/queues/queue-names.js";
import { createTenant, OPERATOR_KEY, staticFormsToCrm } from "../support/admin.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { testRedis } from "../support/redis.js";
import { waitFor } from "../support/wait.js";

describe("ingest → workers: the job outbox", () => {
  const crm = useFakeServer({ status: 200, body: {} });
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
           AND ((classid::bigint << 32) | objid::bigint) = $1`,
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
      () => Promise.resolve(crm.received.filter((request) => request.path === "/no-worker").length),
      (n) => n === 1,
    );
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toEqual({ code: 0, signal: null });
  });

  it("of two workers one listens; each event reaches the CRM within 1 s of its 202 (poll at 5 s), and after the listener's process dies too", async () => {
    const tenant = await createTenant(app.url);
    const form = await staticFormsToCrm(tenant.admin, app.url, crm.url, "/two-workers");
    const first = app.spawn("dist/worker.js");
    await first.waitFor(/job outbox taken/);
    const [leader] = await listeners();
    expect(leader).toBeDefined();
    const second = app.spawn("dist/worker.js");
    await second.waitFor(/worker started/);
    // The second asks for the lock and does not get it: still one listener, the first's.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(await listeners()).toEqual([leader]);

    for (let round = 0; round < 3; round++) {
      expect(await handover((id) => form.deliver(id), `two-workers-${round}`)).toBeLessThan(1_000);
    }

    first.child.kill("SIGKILL");
    await first.exited;
    await second.waitFor(/job outbox taken/);
    const [taker] = await listeners();
    expect(taker).toBeDefined();
    expect(taker).not.toBe(leader);
    for (let round = 0; round < 3; round++) {
      expect(await handover((id) => form.deliver(id), `taken-over-${round}`)).toBeLessThan(1_000);
    }
    expect(crm.received.filter((request) => request.path === "/two-workers")).toHaveLength(6);
  });
});
