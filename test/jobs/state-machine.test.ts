// The job state machine against the real database: every transition is one statement whose WHERE
// names its source statuses, so an illegal transition is refused (and reported), never applied;
// waits use no attempt and end in a terminal status; every requeue follows one attempt policy.
import { CONTEXT_COLUMNS, type ContextRow } from "../../src/jobs/job-context.js";
import { Dispatcher } from "../../src/jobs/dispatcher.js";
import { JobStateMachine } from "../../src/jobs/state/job-state-machine.js";
import { PLATFORM } from "../../src/auth/principal.js";
import { PrismaService } from "../../src/database/prisma.service.js";
import { Metrics } from "../../src/observability/metrics.js";
import type { RunningApi } from "../support/app.js";
import { useApp } from "../support/harness.js";
import { post } from "../support/http.js";
import { freePort } from "../support/process.js";
import { deadRedisEnv } from "../support/redis.js";
import { createTenantWithConnection } from "../support/tenants.js";

describe("job state machine", () => {
  // Jobs are stored but never handed to BullMQ: the worker's dispatcher is stopped (it neither
  // hears the job outbox nor polls), so only the transitions below move them.
  const app = useApp({ api: false, worker: true, env: { DISPATCHER_INTERVAL_MS: "3600000" } });
  let api: RunningApi;
  let state: JobStateMachine;

  beforeAll(async () => {
    await app.worker.get(Dispatcher).onModuleDestroy();
    api = await app.startApi(deadRedisEnv(await freePort()));
    state = app.worker.get(JobStateMachine);
  });

  /** A stored lead-upsert job (Static Forms, no CRM): its row id. */
  const storedJob = async () => {
    const c = await createTenantWithConnection(api.app, {
      provider: "staticforms",
      inboundAuth: { type: "bearer" },
    });
    const response = await post(
      `${api.url}/webhooks/staticforms/${c.connectionId}`,
      { event: "form.submitted", data: { submissionId: `s-${Date.now()}`, formData: { name: "Ada" } } },
      { authorization: `Bearer ${c.secrets.bearerToken}` },
    );
    expect(response.status).toBe(202);
    const { rows } = await app.sql.query<{ id: string }>("SELECT id FROM jobs WHERE tenant_id = $1", [
      c.tenantId,
    ]);
    return rows[0]!.id;
  };
  /** A stored receipt's lead-upsert and crm-delivery (Static Forms with a CRM): their row ids. */
  const storedPair = async () => {
    const c = await createTenantWithConnection(api.app, {
      provider: "staticforms",
      inboundAuth: { type: "bearer" },
      settings: { crmDestination: { url: "http://127.0.0.1:9/crm" } },
    });
    const response = await post(
      `${api.url}/webhooks/staticforms/${c.connectionId}`,
      { event: "form.submitted", data: { submissionId: `p-${Date.now()}`, formData: { name: "Ada" } } },
      { authorization: `Bearer ${c.secrets.bearerToken}` },
    );
    expect(response.status).toBe(202);
    const { rows } = await app.sql.query<{ id: string; operation: string }>(
      "SELECT id, operation FROM jobs WHERE tenant_id = $1",
      [c.tenantId],
    );
    const idOf = (operation: string) => rows.find((job) => job.operation === operation)!.id;
    return { upsert: idOf("lead-upsert"), crm: idOf("crm-delivery") };
  };
  const row = async (id: string): Promise<Record<string, unknown>> =>
    (
      await app.sql.query<Record<string, unknown>>(
        `SELECT status, waiting_for, waiting_since, attempts, max_attempts, last_error_code,
                (SELECT count(*)::int FROM job_attempts a WHERE a.job_id = jobs.id) AS attempt_rows
         FROM jobs WHERE id = $1`,
        [id],
      )
    ).rows[0]!;
  const claim = (id: string) => state.claim<ContextRow>(id, CONTEXT_COLUMNS);
  const refused = async (transition: string) =>
    (await app.worker.get(Metrics).refusedTransitions.get()).values.find(
      (v) => v.labels.transition === transition,
    )?.value ?? 0;

  it("refuses a transition from a status it may not start from, reports it, and changes nothing", async () => {
    const id = await storedJob();
    const claimed = (await claim(id))!;
    expect(await state.succeed(claimed.job)).toEqual([]);

    const before = await refused("retry");
    expect(await state.finish(claimed.job, "retry", { outcome: "retryable", errorCode: "late" })).toBe(false);
    expect(await refused("retry")).toBe(before + 1);
    expect(await state.wait(claimed.job, "quota", new Date())).toBe(false);
    expect(await claim(id)).toBeUndefined();
    // The attempt that succeeded stays on the job row: a success writes no attempt row.
    expect(await row(id)).toMatchObject({
      status: "succeeded",
      attempts: 1,
      last_error_code: null,
      attempt_rows: 0,
    });

    const times = (table: string, started: string, finished: string, column: string) =>
      app.sql
        .query<{ started: string; finished: string }>(
          `SELECT ${started}::text AS started, ${finished}::text AS finished FROM ${table} WHERE ${column} = $1`,
          [id],
        )
        .then((result) => result.rows);
    const run = await times("jobs", "attempt_started_at", "completed_at", "id");

    // A replay that may start only from dead moves nothing; from succeeded (forced) it does.
    await app.worker.get(PrismaService).$transaction(async (tx) => {
      expect(await state.replay(tx, PLATFORM, { jobIds: [id] }, ["dead"])).toEqual([]);
    });
    expect((await row(id)).status).toBe("succeeded");
    await app.worker.get(PrismaService).$transaction(async (tx) => {
      expect(await state.replay(tx, PLATFORM, { jobIds: [id] }, ["succeeded"])).toHaveLength(1);
    });
    expect(await row(id)).toMatchObject({ status: "queued", attempts: 1, max_attempts: 1 + 6 });
    // Leaving succeeded, the job's last attempt goes to the history, with the times its row had.
    expect(await times("job_attempts", "started_at", "finished_at", "job_id")).toEqual(run);
    const { rows } = await app.sql.query(
      `SELECT number, outcome, error_code, duration_ms = (extract(epoch FROM finished_at - started_at) * 1000)::int AS timed
       FROM job_attempts WHERE job_id = $1`,
      [id],
    );
    expect(rows).toEqual([{ number: 1, outcome: "succeeded", error_code: null, timed: true }]);
  });

  it("a late transition of a run taken over as abandoned changes neither the job nor its attempt history", async () => {
    const id = await storedJob();
    const stale = (await claim(id))!;
    await app.sql.query("UPDATE jobs SET updated_at = now() - interval '31 seconds' WHERE id = $1", [id]);
    const current = (await claim(id))!;
    expect(current.job.attempts).toBe(2);
    const history = async () =>
      (
        await app.sql.query<Record<string, unknown>>(
          "SELECT number, outcome, error_code FROM job_attempts WHERE job_id = $1 ORDER BY number",
          [id],
        )
      ).rows;
    const before = await history();
    // The running attempt 2 gets its row when it ends.
    expect(before).toEqual([{ number: 1, outcome: "abandoned", error_code: null }]);
    expect(await state.succeed(stale.job)).toBeUndefined();
    expect(await state.finish(stale.job, "retry", { outcome: "retryable", errorCode: "late" })).toBe(false);
    expect(await state.skip(stale.job, "hold")).toBe(false);
    expect(await state.wait(stale.job, "quota", new Date())).toBe(false);
    expect(await history()).toEqual(before);
    expect(await row(id)).toMatchObject({ status: "running", attempts: 2 });
  });

  it("releases a job parked as blocked while its connection was resumed (the race resume cannot see)", async () => {
    const id = await storedJob();
    await app.sql.query(
      "UPDATE jobs SET status = 'blocked', updated_at = now() - interval '1 minute' WHERE id = $1",
      [id],
    );
    const released = await state.releaseParked(0, 100);
    expect(released.map((job) => job.id)).toContain(id);
    expect((await row(id)).status).toBe("queued");
  });

  it("a wait uses no attempt, is claimed only once due, keeps its start across waits, and expires as dead", async () => {
    const id = await storedJob();
    const first = (await claim(id))!;
    expect(await state.wait(first.job, "quota", new Date(Date.now() + 86_400_000))).toBe(true);
    const waiting = await row(id);
    expect(waiting).toMatchObject({ status: "waiting", waiting_for: "quota", attempts: 0, attempt_rows: 0 });
    expect(waiting.waiting_since).not.toBeNull();

    expect(await claim(id)).toBeUndefined(); // not due yet
    await app.sql.query("UPDATE jobs SET next_attempt_at = now() - interval '1 second' WHERE id = $1", [id]);
    const second = (await claim(id))!;
    expect(second.job.attempts).toBe(1);
    expect(await row(id)).toMatchObject({ status: "running", waiting_for: null });

    // Waiting again (the quota is still spent): the wait's start is the first one's.
    expect(await state.wait(second.job, "circuit", new Date(Date.now() + 86_400_000))).toBe(true);
    expect((await row(id)).waiting_since).toEqual(waiting.waiting_since);

    expect(await state.expireWaits(3600, 100)).toBe(0); // waited seconds, not an hour
    await app.sql.query("UPDATE jobs SET waiting_since = now() - interval '2 hours' WHERE id = $1", [id]);
    expect(await state.expireWaits(3600, 100)).toBeGreaterThanOrEqual(1);
    expect(await row(id)).toMatchObject({
      status: "dead",
      waiting_for: null,
      last_error_code: "wait_expired",
      attempts: 0,
    });
  });

  it("gives a requeued job its operation's allowance on top of the attempts it made (replay, resume, release)", async () => {
    const id = await storedJob();
    // Two attempts made, then dead: a replay allows 2 + 6.
    await app.sql.query("UPDATE jobs SET status = 'dead', attempts = 2, max_attempts = 6 WHERE id = $1", [
      id,
    ]);
    await app.worker
      .get(PrismaService)
      .$transaction((tx) => state.replay(tx, PLATFORM, { jobIds: [id] }, ["dead"]));
    expect(await row(id)).toMatchObject({ status: "queued", attempts: 2, max_attempts: 8 });

    // Held with three attempts made; the connection is active, so the dispatcher's release applies.
    await app.sql.query(
      "UPDATE jobs SET status = 'held', attempts = 3, updated_at = now() - interval '1 minute' WHERE id = $1",
      [id],
    );
    const released = await state.releaseParked(0, 100);
    expect(released.map((job) => job.id)).toContain(id);
    expect(await row(id)).toMatchObject({ status: "queued", attempts: 3, max_attempts: 9 });
  });

  it("creates a CRM delivery waiting for its lead-upsert, whose success releases it in the same statement", async () => {
    const { upsert, crm } = await storedPair();
    expect(await row(crm)).toMatchObject({ status: "waiting", waiting_for: "dependency", attempts: 0 });
    expect(await claim(crm)).toBeUndefined(); // a dependency wait is claimed only once released
    const claimed = (await claim(upsert))!;
    expect(await state.succeed(claimed.job)).toEqual([
      { id: crm, jobKey: expect.stringMatching(/^crm-delivery:/), operation: "crm-delivery" },
    ]);
    expect(await row(crm)).toMatchObject({
      status: "queued",
      waiting_for: null,
      attempts: 0,
      max_attempts: 8,
    });
    expect((await claim(crm))!.job.dependencyStatus).toBe("succeeded");
  });

  it("a CRM delivery claimed before its lead-upsert succeeded waits; one claimed after the success runs", async () => {
    // Both queued, as a resume or a receipt replay leaves them.
    const { upsert, crm } = await storedPair();
    await app.sql.query(
      "UPDATE jobs SET status = 'queued', waiting_for = NULL, waiting_since = NULL WHERE id = $1",
      [crm],
    );
    const early = (await claim(crm))!;
    expect(early.job.dependencyStatus).toBe("queued");
    const until = new Date(Date.now() + 3_600_000);
    expect(await state.waitForDependency(early.job, until)).toEqual({ waiting: true, satisfied: false });
    expect(await row(crm)).toMatchObject({
      status: "waiting",
      waiting_for: "dependency",
      attempts: 0,
      attempt_rows: 0,
    });
    // The upsert's success finds it waiting and releases it.
    expect((await state.succeed((await claim(upsert))!.job))!.map((job) => job.id)).toEqual([crm]);

    // Claimed while the upsert ran, and the upsert succeeded before the wait: no wait, it runs.
    const second = await storedPair();
    await app.sql.query(
      "UPDATE jobs SET status = 'queued', waiting_for = NULL, waiting_since = NULL WHERE id = $1",
      [second.crm],
    );
    const upsertRun = (await claim(second.upsert))!;
    const crmRun = (await claim(second.crm))!;
    expect(crmRun.job.dependencyStatus).toBe("running");
    expect(await state.succeed(upsertRun.job)).toEqual([]); // the CRM delivery is running, not waiting
    expect(await state.waitForDependency(crmRun.job, until)).toEqual({ waiting: false, satisfied: true });
    // Running its first attempt (whose row is written when it ends).
    expect(await row(second.crm)).toMatchObject({ status: "running", attempts: 1, attempt_rows: 0 });
  });

  it("releases, on the dispatcher's sweep, a dependency wait whose dependency succeeded without releasing it", async () => {
    const { upsert, crm } = await storedPair();
    // What a worker that died between the upsert's success and its follow-up release leaves behind.
    await app.sql.query("UPDATE jobs SET status = 'succeeded' WHERE id = $1", [upsert]);
    await app.sql.query("UPDATE jobs SET updated_at = now() - interval '1 minute' WHERE id = $1", [crm]);
    expect((await state.releaseSatisfiedWaits(30_000, 100)).map((job) => job.id)).toContain(crm);
    expect(await row(crm)).toMatchObject({ status: "queued", waiting_for: null });
  });
});
