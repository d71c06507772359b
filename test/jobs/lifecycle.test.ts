// Job lifecycle edges: connection states seen by the worker, resumed work re-enqueued by the
// dispatcher, unreadable secrets, and one job never running twice at once.
import { CONTEXT_COLUMNS } from "../../src/jobs/job-context.js";
import { JobStateMachine } from "../../src/jobs/state/job-state-machine.js";
import { adminAs, attemptHistory, OPERATOR_KEY } from "../support/admin.js";
import type { RunningApi } from "../support/app.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import { freePort } from "../support/process.js";
import { deadRedisEnv } from "../support/redis.js";
import { createTenantWithConnection, type TestConnection } from "../support/tenants.js";
import { waitFor } from "../support/wait.js";

describe("job lifecycle", () => {
  let noRedisApi: RunningApi;
  const crm = useFakeServer();
  const app = useApp({
    api: false,
    worker: true,
    env: { JOB_BACKOFF_BASE_MS: "50", SIDE_EFFECT_TIMEOUT_MS: "5000", DISPATCHER_INTERVAL_MS: "300" },
  });

  beforeAll(async () => {
    // Ingest through an API whose Redis is down: job rows are stored, nothing is in BullMQ, so the
    // test decides what the worker finds when the dispatcher hands the jobs over.
    noRedisApi = await app.startApi({
      ...deadRedisEnv(await freePort()),
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
    });
  });

  const connection = () =>
    createTenantWithConnection(noRedisApi.app, {
      provider: "staticforms",
      inboundAuth: { type: "bearer" },
      settings: { crmDestination: { url: `${crm.url}/crm` } },
    });
  const deliver = (c: TestConnection, id: string) =>
    post(
      `${noRedisApi.url}/webhooks/staticforms/${c.connectionId}`,
      { event: "form.submitted", data: { submissionId: id, formData: { name: "Zed" } } },
      { authorization: `Bearer ${c.secrets.bearerToken}` },
    );
  const statuses = (tenantId: string) =>
    app.sql
      .query<{ status: string; attempts: number; last_error_code: string | null }>(
        "SELECT status, attempts, last_error_code FROM jobs WHERE tenant_id = $1 ORDER BY operation",
        [tenantId],
      )
      .then((result) => result.rows);
  const setConnection = (c: TestConnection, status: string) =>
    app.sql.query("UPDATE connections SET status = $2 WHERE id = $1", [c.connectionId, status]);

  /** Jobs stored as held (paused at ingest), then handed to the worker while the connection is `status`. */
  /** A delivery's lead-upsert job, queued but not due for a day: only explicit claims take it. */
  const notDueJob = async (c: TestConnection, submissionId: string) => {
    await setConnection(c, "paused");
    await deliver(c, submissionId);
    const { rows } = await app.sql.query<{ id: string }>(
      `UPDATE jobs SET status = 'queued', next_attempt_at = now() + interval '1 day'
       WHERE tenant_id = $1 AND operation = 'lead-upsert' RETURNING id`,
      [c.tenantId],
    );
    return rows;
  };
  const queuedWhile = async (c: TestConnection, id: string, status: string) => {
    await setConnection(c, "paused");
    expect((await deliver(c, id)).status).toBe(202);
    expect((await statuses(c.tenantId)).map((row) => row.status)).toEqual(["held", "held"]);
    await setConnection(c, status);
    await app.sql.query("UPDATE jobs SET status = 'queued' WHERE tenant_id = $1", [c.tenantId]);
  };

  it("a job the worker finds paused is held, and runs once when resumed", async () => {
    const c = await connection();
    await queuedWhile(c, "held-1", "paused");
    const held = await waitFor(
      () => statuses(c.tenantId),
      (rows) => rows.every((row) => row.status === "held"),
    );
    expect(held.map((row) => row.attempts)).toEqual([0, 0]);
    const callsBefore = crm.received.length;

    // What resume does: the connection active again, its held jobs queued again.
    await setConnection(c, "active");
    await app.sql.query(
      "UPDATE jobs SET status = 'queued', updated_at = now() - interval '1 minute' WHERE tenant_id = $1",
      [c.tenantId],
    );
    const done = await waitFor(
      () => statuses(c.tenantId),
      (rows) => rows.every((row) => row.status === "succeeded"),
    );
    expect(done.map((row) => row.attempts)).toEqual([1, 1]);
    expect(crm.received.length - callsBefore).toBe(1);
  });

  it("a disabled connection's queued jobs are cancelled, and kept", async () => {
    const c = await connection();
    await queuedWhile(c, "disabled-1", "disabled");
    const rows = await waitFor(
      () => statuses(c.tenantId),
      (list) => list.every((row) => row.status === "cancelled"),
    );
    expect(rows).toHaveLength(2);
  });

  it("secrets that cannot be decrypted make the job dead at once, not stuck", async () => {
    const c = await connection();
    await app.sql.query("UPDATE connections SET crm_signing_secret = 'v1.deadbeef.x.y.z' WHERE id = $1", [
      c.connectionId,
    ]);
    await deliver(c, "unreadable-1");
    const rows = await waitFor(
      () => statuses(c.tenantId),
      (list) => list.some((row) => row.status === "dead"),
    );
    expect(rows).toEqual([
      // Only the job that reads the unreadable secret stops: the CRM delivery, not the lead-upsert.
      { status: "dead", attempts: 1, last_error_code: "secrets_unreadable" },
      { status: "succeeded", attempts: 1, last_error_code: null },
    ]);
  });

  it("a job is never taken by two workers at once, and a late finish cannot overwrite the newer attempt", async () => {
    const c = await connection();
    // Queued, but not due for a day: only the claims below can take it, not the dispatcher.
    const rows = await notDueJob(c, "race-1");
    const jobs = app.worker.get(JobStateMachine);
    const claims = await Promise.all([
      jobs.claim(rows[0]!.id, CONTEXT_COLUMNS),
      jobs.claim(rows[0]!.id, CONTEXT_COLUMNS),
      jobs.claim(rows[0]!.id, CONTEXT_COLUMNS),
    ]);
    const taken = claims.flatMap((claim) => (claim ? [claim.job] : []));
    expect(taken).toHaveLength(1);
    expect(await jobs.claim(rows[0]!.id, CONTEXT_COLUMNS)).toBeUndefined(); // running, and its worker is alive

    // A stale runner (an older attempt) finishing late changes nothing.
    await jobs.finish({ ...taken[0]!, attempts: taken[0]!.attempts - 1 }, "retry", {
      outcome: "retryable",
      errorCode: "late",
    });
    expect((await statuses(c.tenantId)).find((row) => row.status === "running")).toMatchObject({
      attempts: 1,
    });
    await jobs.succeed(taken[0]!);
    const after = await app.sql.query("SELECT status, last_error_code FROM jobs WHERE id = $1", [
      rows[0]!.id,
    ]);
    expect(after.rows).toEqual([{ status: "succeeded", last_error_code: null }]);
  });
  it("a run abandoned mid-attempt is taken over once stale, and its attempt is recorded as abandoned", async () => {
    const c = await connection();
    const rows = await notDueJob(c, "abandon-1");
    const jobs = app.worker.get(JobStateMachine);
    const first = await jobs.claim(rows[0]!.id, CONTEXT_COLUMNS);
    expect(first).toBeDefined();
    expect(await jobs.untilAbandoned(rows[0]!.id)).toBeGreaterThan(25_000);
    // Its worker dies: nothing records the attempt's end. Thirty seconds later the run counts as abandoned.
    await app.sql.query("UPDATE jobs SET updated_at = now() - interval '31 seconds' WHERE id = $1", [
      rows[0]!.id,
    ]);
    expect(await jobs.untilAbandoned(rows[0]!.id)).toBe(0);
    const second = await jobs.claim(rows[0]!.id, CONTEXT_COLUMNS);
    expect(second?.job.attempts).toBe(2);
    const attempts = await app.sql.query(
      "SELECT number, outcome, finished_at IS NOT NULL AS closed FROM job_attempts WHERE job_id = $1 ORDER BY number",
      [rows[0]!.id],
    );
    expect(attempts.rows).toEqual([{ number: 1, outcome: "abandoned", closed: true }]);
    // The attempt running now has no row until it ends; the job view shows it from the job.
    const view = await adminAs(noRedisApi.url, OPERATOR_KEY).get(`/admin/jobs/${rows[0]!.id}`);
    expect(view.status).toBe(200);
    expect(view.body.attemptHistory).toEqual([
      expect.objectContaining({ number: 1, outcome: "abandoned" }),
      expect.objectContaining({ number: 2, outcome: null, finishedAt: null, startedAt: expect.any(String) }),
    ]);
  });

  it("a success stays on the job row; the same attempt as a row of an earlier version shows once", async () => {
    const c = await connection();
    const [job] = await notDueJob(c, "success-1");
    const jobs = app.worker.get(JobStateMachine);
    const claimed = (await jobs.claim(job!.id, CONTEXT_COLUMNS))!;
    expect(await jobs.succeed(claimed.job)).toEqual([]); // its CRM delivery is held: nothing released
    const rows = () =>
      app.sql
        .query<{ n: number }>("SELECT count(*)::int AS n FROM job_attempts WHERE job_id = $1", [job!.id])
        .then((result) => result.rows[0]!.n);
    expect(await rows()).toBe(0);
    const history = () => attemptHistory(adminAs(noRedisApi.url, OPERATOR_KEY), job!.id);
    const fromJob = await history();
    expect(fromJob).toEqual([
      {
        number: 1,
        startedAt: expect.any(String),
        finishedAt: expect.any(String),
        outcome: "succeeded",
        errorCode: null,
        durationMs: expect.any(Number),
      },
    ]);

    // A row an earlier version opened at the claim and never closed: the job row's account instead.
    await app.sql.query(
      `INSERT INTO job_attempts (tenant_id, job_id, job_created_at, number, started_at)
       SELECT tenant_id, id, created_at, attempts, attempt_started_at FROM jobs WHERE id = $1`,
      [job!.id],
    );
    expect(await history()).toEqual(fromJob);
    // The row an earlier version wrote at the success: shown as written, once.
    await app.sql.query(
      `UPDATE job_attempts SET finished_at = started_at + interval '7 milliseconds', outcome = 'succeeded',
              duration_ms = 7 WHERE job_id = $1`,
      [job!.id],
    );
    expect(await history()).toEqual([
      expect.objectContaining({ number: 1, outcome: "succeeded", durationMs: 7 }),
    ]);
  });
});
