// Retention: raw payloads purged after PAYLOAD_RETENTION_DAYS, receipts after RECEIPT_RETENTION_DAYS,
// in bounded batches, never while a job still needs them; a re-delivery after the purge makes no second lead.
// Time is moved by back-dating rows (the windows are days long).
import { randomBytes } from "node:crypto";
import { testRedisPrefix } from "../support/app.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import type { TestConnection } from "../support/tenants.js";
import { bootRetentionPassDone } from "../support/retention.js";
import { waitFor } from "../support/wait.js";
import { RetentionWorker } from "../../src/retention/retention.worker.js";

describe("retention", () => {
  const crm = useFakeServer();
  const app = useApp({ worker: true, env: { DISPATCHER_INTERVAL_MS: "300" } });

  beforeAll(() => bootRetentionPassDone(app.worker));

  const connect = () =>
    app.createConnection({
      provider: "staticforms",
      inboundAuth: { type: "bearer" },
      settings: { crmDestination: { url: `${crm.url}/crm` } },
    });
  const deliver = (c: TestConnection, submissionId: string) =>
    post(
      `${app.url}/webhooks/staticforms/${c.connectionId}`,
      {
        event: "form.submitted",
        data: { submissionId, formData: { name: "Ann", email: "ann@example.test" } },
      },
      { authorization: `Bearer ${c.secrets.bearerToken}` },
    );
  // As if all of the tenant's receipts, their payloads and jobs were made `days` ago (no month
  // partition is that old: the payloads and attempts move to the DEFAULT partitions).
  const backdate = (tenantId: string, days: number) =>
    app.sql.query(
      `WITH receipt AS (
         UPDATE receipts SET received_at = now() - make_interval(days => $2) WHERE tenant_id = $1
         RETURNING id, received_at
       ), payload AS (
         UPDATE receipt_payloads p SET received_at = r.received_at FROM receipt r WHERE p.receipt_id = r.id
       ), job AS (
         UPDATE jobs SET created_at = now() - make_interval(days => $2) WHERE tenant_id = $1 RETURNING id, created_at
       )
       UPDATE job_attempts a SET job_created_at = j.created_at FROM job j WHERE a.job_id = j.id`,
      [tenantId, days],
    );
  const finished = (tenantId: string) =>
    waitFor(
      async () =>
        (await app.sql.query<{ status: string }>("SELECT status FROM jobs WHERE tenant_id = $1", [tenantId]))
          .rows,
      (rows) => rows.length === 2 && rows.every((row) => row.status === "succeeded"),
    );
  const receiptsOf = async (tenantId: string) =>
    (
      await app.sql.query<{ raw_payload: unknown; payload_purged_at: Date | null }>(
        `SELECT (SELECT p.payload FROM receipt_payloads p WHERE p.receipt_id = r.id) AS raw_payload,
                r.payload_purged_at
         FROM receipts r WHERE tenant_id = $1`,
        [tenantId],
      )
    ).rows;
  const count = async (sql: string, tenantId: string) =>
    Number((await app.sql.query<{ n: string }>(sql, [tenantId])).rows[0]!.n);

  it("purges payloads, then receipts with their jobs; a re-delivery afterwards makes no second lead", async () => {
    const c = await connect();
    expect((await deliver(c, "sub_retained")).status).toBe(202);
    await finished(c.tenantId);
    // As if each job had failed once before it succeeded (a success writes no attempt row).
    await app.sql.query(
      `WITH job AS (UPDATE jobs SET attempts = attempts + 1 WHERE tenant_id = $1 RETURNING tenant_id, id, created_at)
       INSERT INTO job_attempts (tenant_id, job_id, job_created_at, number, started_at, finished_at, outcome, error_code)
       SELECT tenant_id, id, created_at, 1, now(), now(), 'retryable', 'http_503' FROM job`,
      [c.tenantId],
    );
    expect(await count("SELECT count(*) AS n FROM job_attempts WHERE tenant_id = $1", c.tenantId)).toBe(2);
    const retention = app.worker.get(RetentionWorker);

    await backdate(c.tenantId, 31);
    expect((await retention.run()).payloads).toBeGreaterThanOrEqual(1);
    expect(await receiptsOf(c.tenantId)).toEqual([
      { raw_payload: null, payload_purged_at: expect.any(Date) },
    ]);

    await backdate(c.tenantId, 401);
    expect((await retention.run()).receipts).toBeGreaterThanOrEqual(1);
    expect(await receiptsOf(c.tenantId)).toEqual([]);
    expect(await count("SELECT count(*) AS n FROM jobs WHERE tenant_id = $1", c.tenantId)).toBe(0);
    expect(await count("SELECT count(*) AS n FROM job_attempts WHERE tenant_id = $1", c.tenantId)).toBe(0);

    // The provider delivers the same event again: a new receipt, but still one lead.
    expect((await deliver(c, "sub_retained")).status).toBe(202);
    await finished(c.tenantId);
    expect(await count("SELECT count(*) AS n FROM leads WHERE tenant_id = $1", c.tenantId)).toBe(1);
    expect(await count("SELECT count(*) AS n FROM receipts WHERE tenant_id = $1", c.tenantId)).toBe(1);
    // Nor a second CRM delivery: the accepted one is remembered under its job key.
    const ids = crm.received
      .filter((r) => r.body.includes(c.connectionId))
      .map((r) => r.headers["webhook-id"]);
    expect(ids).toHaveLength(1);
  });

  it("keeps what a job still needs (unfinished, or dead and replayable), and purges thousands in bounded batches", async () => {
    const held = await connect();
    await app.sql.query("UPDATE connections SET status = 'paused' WHERE id = $1", [held.connectionId]);
    expect((await deliver(held, "sub_held")).status).toBe(202);
    await backdate(held.tenantId, 500);

    const bulk = await connect();
    await app.sql.query(
      `WITH receipt AS (
         INSERT INTO receipts (tenant_id, connection_id, provider, account_id, idempotency_key, lead_id, kind, status,
                               occurred_at, payload_digest, received_at)
         SELECT $1, $2, 'staticforms', 'acct', md5(n::text), 'lead-' || n, 'lead.created', 'accepted',
                now(), md5(n::text), now() - interval '40 days'
         FROM generate_series(1, 2500) AS n
         RETURNING id, tenant_id, received_at
       )
       INSERT INTO receipt_payloads (receipt_id, tenant_id, received_at, payload)
       SELECT id, tenant_id, received_at, '{"formData":{"name":"x"}}' FROM receipt`,
      [bulk.tenantId, bulk.connectionId],
    );
    // A dead CRM delivery may still be replayed: its receipt keeps the payload.
    const dead = await connect();
    crm.reply({ status: 422 });
    expect((await deliver(dead, "sub_dead")).status).toBe(202);
    await waitFor(
      async () =>
        (
          await app.sql.query<{ status: string }>(
            "SELECT status FROM jobs WHERE tenant_id = $1 AND operation = 'crm-delivery'",
            [dead.tenantId],
          )
        ).rows,
      (rows) => rows[0]?.status === "dead",
    );
    await backdate(dead.tenantId, 40);

    const purged = await app.worker.get(RetentionWorker).run();
    expect(purged.payloads).toBeGreaterThanOrEqual(2500);
    expect(
      await count("SELECT count(*) AS n FROM receipt_payloads WHERE tenant_id = $1", bulk.tenantId),
    ).toBe(0);
    expect(await count("SELECT count(*) AS n FROM receipts WHERE tenant_id = $1", bulk.tenantId)).toBe(2500);

    expect(await receiptsOf(dead.tenantId)).toEqual([
      { raw_payload: expect.any(Object), payload_purged_at: null },
    ]);
    // The held job still needs its receipt: nothing of it was purged.
    const kept = await receiptsOf(held.tenantId);
    expect(kept).toEqual([{ raw_payload: expect.any(Object), payload_purged_at: null }]);
    expect(
      await count("SELECT count(*) AS n FROM jobs WHERE tenant_id = $1 AND status = 'held'", held.tenantId),
    ).toBe(2);
  });

  it("deletes finished jobs without a receipt after RECEIPT_RETENTION_DAYS, so their attempts go with their month", async () => {
    const c = await connect();
    const paused = await connect();
    await app.sql.query("UPDATE connections SET status = 'paused' WHERE id = $1", [paused.connectionId]);
    // Created 440 days ago: its whole month is older than the 400-day window, whatever today is.
    const created = new Date(Date.now() - 440 * 86_400_000);
    const job = async (conn: TestConnection, key: string, status: string, completedAt: Date | null) =>
      (
        await app.sql.query<{ id: string }>(
          `WITH job AS (
             INSERT INTO jobs (tenant_id, connection_id, operation, job_key, status, max_attempts, created_at, completed_at)
             VALUES ($1, $2, 'reconciliation', $3, $4, 3, $5, $6) RETURNING id, tenant_id, created_at
           ), attempt AS (
             INSERT INTO job_attempts (tenant_id, job_id, job_created_at, number, started_at, finished_at, outcome)
             SELECT tenant_id, id, created_at, 1, created_at, created_at, 'retryable' FROM job
           )
           SELECT id FROM job`,
          [conn.tenantId, conn.connectionId, `reconciliation:${key}`, status, created, completedAt],
        )
      ).rows[0]!.id;
    const done = await job(c, `done-${c.connectionId}`, "succeeded", new Date(Date.now() - 430 * 86_400_000));
    const recent = await job(c, `recent-${c.connectionId}`, "dead", new Date(Date.now() - 86_400_000));
    const held = await job(paused, `held-${paused.connectionId}`, "held", null);
    await app.sql.query("SELECT leadgate_create_month_partition('job_attempts', $1)", [created]);

    // (The worker's own scheduled pass may be the one that does it: the outcome is the same.)
    await app.worker.get(RetentionWorker).run();
    const jobs = await app.sql.query<{ id: string }>("SELECT id FROM jobs WHERE id = ANY($1::uuid[])", [
      [done, recent, held],
    ]);
    expect(jobs.rows.map((row) => row.id).sort()).toEqual([recent, held].sort());
    // The month was dropped: the deleted job's attempt went with it, the held job's survived into DEFAULT.
    const attempts = await app.sql.query<{ job_id: string; part: string }>(
      "SELECT job_id, tableoid::regclass::text AS part FROM job_attempts WHERE job_id = ANY($1::uuid[])",
      [[done, recent, held]],
    );
    expect(attempts.rows.map((row) => [row.job_id, row.part]).sort()).toEqual(
      [
        [recent, "job_attempts_default"],
        [held, "job_attempts_default"],
      ].sort(),
    );
  });

  it("a database connection lost in the middle of a receipt purge fails that pass, not the worker process", async () => {
    const c = await connect();
    expect((await deliver(c, "sub_connection_lost")).status).toBe(202);
    await finished(c.tenantId);
    await backdate(c.tenantId, 401);
    // Hold the jobs' row locks so the purge waits inside its transaction, then cut its connection.
    const blocker = await app.sql.connect();
    try {
      await blocker.query("BEGIN");
      await blocker.query("SELECT 1 FROM jobs WHERE tenant_id = $1 FOR UPDATE", [c.tenantId]);
      const pass = app.worker.get(RetentionWorker).run();
      const waiting = await waitFor(
        async () =>
          (
            await app.sql.query<{ pid: number }>(
              "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'SELECT 1 FROM jobs WHERE receipt_id%'",
            )
          ).rows,
        (rows) => rows.length === 1,
      );
      await app.sql.query("SELECT pg_terminate_backend($1)", [waiting[0]!.pid]);
      await expect(pass).rejects.toThrow(/terminat/i);
    } finally {
      await blocker.query("ROLLBACK");
      blocker.release();
    }
    // The same process purges on its next pass.
    expect((await app.worker.get(RetentionWorker).run()).receipts).toBeGreaterThanOrEqual(1);
    expect(await receiptsOf(c.tenantId)).toEqual([]);
  });

  it("runs on its own schedule in the worker", async () => {
    const c = await connect();
    expect((await deliver(c, `sub_${randomBytes(4).toString("hex")}`)).status).toBe(202);
    await finished(c.tenantId);
    await backdate(c.tenantId, 45);
    // A worker with queues of its own, so its retention schedule is a fresh one.
    const scheduled = await app.startWorker({
      RETENTION_INTERVAL_MINUTES: "60",
      REDIS_PREFIX: testRedisPrefix(),
    });
    try {
      await waitFor(
        () => receiptsOf(c.tenantId),
        (rows) => rows[0]?.payload_purged_at instanceof Date,
      );
    } finally {
      await scheduled.close();
    }
  });
});
