// Grouping and cost: thousands of jobs of one group going dead at once, from concurrent sessions,
// make one alert and one notification per channel. The bookkeeping is per statement (counted by
// Postgres: track_functions), in the transaction of the jobs' change: one alert upsert per group
// and statement, so a statement that kills a batch of jobs costs one, and a job dying alone one.
import pg from "pg";
import { useApp, useFakeServer } from "../support/harness.js";
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { waitFor } from "../support/wait.js";

const DYING = 2_000;
const SESSIONS = 8;

describe("alerts: grouping and its cost", () => {
  const receiver = useFakeServer({ status: 204 });
  const app = useApp({
    worker: true,
    env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY, DISPATCHER_INTERVAL_MS: "300" },
  });

  /** `count` running crm-delivery jobs of the connection, as claims leave them; answers their ids. */
  const runningJobs = async (tenantId: string, connectionId: string, count: number, prefix: string) =>
    (
      await app.sql.query<{ id: string }>(
        `INSERT INTO jobs (tenant_id, connection_id, operation, job_key, status, attempts, max_attempts)
         SELECT $1, $2, 'crm-delivery', $3 || g, 'running', 1, 8 FROM generate_series(1, $4) g RETURNING id`,
        [tenantId, connectionId, `crm-delivery:${prefix}-`, count],
      )
    ).rows.map((row) => row.id);
  /** The die of one job, as the state machine's statement moves it (one statement, autocommit). */
  const DIE = `UPDATE jobs SET status = 'dead', last_error_code = 'http_400', last_error_at = now(),
               completed_at = now(), updated_at = now() WHERE id = $1 AND status = 'running'`;

  it(`${DYING} dead jobs from ${SESSIONS} sessions at once: one alert, one notification per channel, one alert statement per dead-making statement`, async () => {
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

    // A die whose transaction rolls back leaves no alert: the alert is part of the change.
    const [undone] = await runningJobs(tenant.tenantId, connectionId, 1, "undone");
    const client = await app.sql.connect();
    try {
      await client.query("BEGIN");
      await client.query(DIE, [undone]);
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
    expect(
      (await app.sql.query("SELECT 1 FROM alerts WHERE connection_id = $1", [connectionId])).rowCount,
    ).toBe(0);

    const ids = await runningJobs(tenant.tenantId, connectionId, DYING, "many");
    const sessions = Array.from({ length: SESSIONS }, () => new pg.Client({ connectionString: app.db.url }));
    await Promise.all(sessions.map((session) => session.connect()));
    try {
      await Promise.all(
        sessions.map(async (session, n) => {
          for (let i = n; i < ids.length; i += SESSIONS) await session.query(DIE, [ids[i]]);
        }),
      );
    } finally {
      await Promise.all(sessions.map((session) => session.end()));
    }
    const alerts = await app.sql.query<{ type: string; status: string; count: number; id: string }>(
      "SELECT id, type, status, count FROM alerts WHERE connection_id = $1",
      [connectionId],
    );
    expect(alerts.rows.map(({ type, status, count }) => ({ type, status, count }))).toEqual([
      { type: "job.dead", status: "open", count: DYING },
    ]);
    const notifications = await app.sql.query<{ job_key: string }>(
      "SELECT job_key FROM jobs WHERE alert_id = $1 ORDER BY job_key",
      [alerts.rows[0]!.id],
    );
    expect(notifications.rows).toHaveLength(2);

    // The cost, counted by Postgres: 500 more dead jobs in one transaction of this session, 250
    // one statement each, and 250 in one statement (as the worker's batch of failures moves them).
    const more = await runningJobs(tenant.tenantId, connectionId, 500, "counted");
    const counted = await app.sql.connect();
    let calls: Record<string, number>;
    try {
      await counted.query("BEGIN");
      await counted.query("SET LOCAL track_functions = 'all'");
      for (const id of more.slice(0, 250)) await counted.query(DIE, [id]);
      const batch = await counted.query(DIE.replace("id = $1", "id = ANY($1::uuid[])"), [more.slice(250)]);
      expect(batch.rowCount).toBe(250);
      const { rows } = await counted.query<{ funcname: string; calls: string }>(
        "SELECT funcname, calls FROM pg_stat_xact_user_functions",
      );
      calls = Object.fromEntries(rows.map((row) => [row.funcname, Number(row.calls)]));
      await counted.query("COMMIT");
    } finally {
      counted.release();
    }
    // Per statement: the trigger, and one alert upsert per group (alert_raise: one INSERT … ON
    // CONFLICT statement, its group key computed once); no alert opened, so no notification created.
    expect(calls).toEqual({
      jobs_alerts: 251,
      jobs_dead_alerts: 251,
      alert_raise: 251,
      alert_group_key: 251,
    });
    expect(
      (await app.sql.query<{ count: number }>("SELECT count FROM alerts WHERE id = $1", [alerts.rows[0]!.id]))
        .rows[0]!.count,
    ).toBe(DYING + 500);

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
