// Grouping and cost: thousands of jobs of one group going dead at once, in two worker processes'
// state machines, make one alert and one notification per channel. The bookkeeping is per
// statement, in the transaction of the jobs' change: one alert upsert per group and statement, so a
// statement that kills a batch of jobs costs one, and a job dying alone one.
import { jest } from "@jest/globals";
import { AlertBook } from "../../src/alerts/alert-book.js";
import { CONTEXT_COLUMNS, type ContextRow } from "../../src/jobs/job-context.js";
import { type ClaimedJob, JobStateMachine } from "../../src/jobs/state/job-state-machine.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { waitFor } from "../support/wait.js";

const DYING = 2_000;

describe("alerts: grouping and its cost", () => {
  const receiver = useFakeServer({ status: 204 });
  // No dispatcher poll during the test: the jobs below are moved by the calls of the test only
  // (notifications leave through the outbox's wakeup, not the poll).
  const app = useApp({
    worker: true,
    env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY, DISPATCHER_INTERVAL_MS: "3600000" },
  });

  /** `count` crm-delivery jobs of the connection, claimed by `state` as a worker's run would. */
  const runningJobs = async (
    state: JobStateMachine,
    tenantId: string,
    connectionId: string,
    count: number,
    prefix: string,
  ): Promise<ClaimedJob[]> => {
    const { rows } = await app.sql.query<{ id: string }>(
      `INSERT INTO jobs (tenant_id, connection_id, operation, job_key, status, max_attempts)
       SELECT $1, $2, 'crm-delivery', $3 || g, 'queued', 8 FROM generate_series(1, $4) g RETURNING id`,
      [tenantId, connectionId, `crm-delivery:${prefix}-`, count],
    );
    const claimed = await Promise.all(rows.map(({ id }) => state.claim<ContextRow>(id, CONTEXT_COLUMNS)));
    return claimed.map((run) => run!.job);
  };
  const die = (state: JobStateMachine, job: ClaimedJob) =>
    state.finish(job, "die", { outcome: "permanent", errorCode: "http_400" });
  const alertsOf = async (connectionId: string) =>
    (
      await app.sql.query<{ id: string; type: string; status: string; count: number }>(
        "SELECT id, type, status, count FROM alerts WHERE connection_id = $1",
        [connectionId],
      )
    ).rows;

  it(`${DYING} dead jobs from two workers at once: one alert, one notification per channel, one alert upsert per dead-making statement`, async () => {
    const tenant = await createTenant(app.url);
    const created = await tenant.admin.post("/admin/connections", {
      provider: "staticforms",
      externalAccountId: "form-grouping",
      displayName: "Grouping",
      inboundAuth: { type: "bearer" },
    });
    const connectionId = created.body.connection.id as string;
    for (const path of ["/one", "/two"]) {
      const channel = await tenant.admin.post("/admin/notification-channels", {
        type: "webhook",
        url: `${receiver.url}${path}`,
      });
      expect(channel.status).toBe(201);
    }
    const states = [app.worker.get(JobStateMachine), (await app.startWorker()).get(JobStateMachine)];

    // A die whose alert cannot be written is not applied: the alert is part of the change.
    const [undone] = await runningJobs(states[0]!, tenant.tenantId, connectionId, 1, "undone");
    await app.sql.query("ALTER TABLE alerts ADD CONSTRAINT grouping_test_refuses CHECK (false) NOT VALID");
    try {
      await expect(die(states[0]!, undone!)).rejects.toThrow(/grouping_test_refuses/);
    } finally {
      await app.sql.query("ALTER TABLE alerts DROP CONSTRAINT grouping_test_refuses");
    }
    expect((await app.sql.query("SELECT status FROM jobs WHERE id = $1", [undone!.id])).rows[0]).toEqual({
      status: "running",
    });
    expect(await alertsOf(connectionId)).toEqual([]);

    const jobs = await runningJobs(states[0]!, tenant.tenantId, connectionId, DYING, "many");
    const moved = await Promise.all(jobs.map((job, n) => die(states[n % 2]!, job)));
    expect(moved.every(Boolean)).toBe(true);
    const alerts = await alertsOf(connectionId);
    expect(alerts.map(({ type, status, count }) => ({ type, status, count }))).toEqual([
      { type: "job.dead", status: "open", count: DYING },
    ]);
    const notifications = await app.sql.query<{ job_key: string }>(
      "SELECT job_key FROM jobs WHERE alert_id = $1 ORDER BY job_key",
      [alerts[0]!.id],
    );
    expect(notifications.rows).toHaveLength(2);

    // The cost: 250 more dies one after the other (one statement each), then 250 at once (the
    // worker's batches of failures: one statement per batch of up to 100). No alert opens, so no
    // notification is created.
    const raises = jest.spyOn(AlertBook.prototype, "raiseMany");
    try {
      const more = await runningJobs(states[0]!, tenant.tenantId, connectionId, 500, "counted");
      for (const job of more.slice(0, 250)) await die(states[0]!, job);
      expect(raises).toHaveBeenCalledTimes(250);
      raises.mockClear();
      await Promise.all(more.slice(250).map((job) => die(states[0]!, job)));
      // Batches of 1, 1, then up to 100 while two are in flight.
      expect(raises.mock.calls.length).toBeLessThanOrEqual(6);
      const counted = raises.mock.calls.flatMap(([, occurrences]) => occurrences);
      expect(counted).toHaveLength(250);
    } finally {
      raises.mockRestore();
    }
    expect((await alertsOf(connectionId))[0]!.count).toBe(DYING + 500);

    await waitFor(
      () => Promise.resolve(receiver.received.length),
      (n) => n === 2,
    );
    await app.settled();
    expect(receiver.received.map((request) => request.path).sort()).toEqual(["/one", "/two"]);
    expect(new Set(receiver.received.map((request) => request.headers["webhook-id"]))).toEqual(
      new Set(notifications.rows.map((row) => row.job_key)),
    );
  });
});
