// Partitioned history (docs/operations.md): payloads, attempts, messages and audit by month, with a
// DEFAULT partition each; retention drops whole months, keeping the rows something still needs.
// Time is moved by running a retention pass "in the future" (its `now`), so the current month is old.
import { createTenant, OPERATOR_KEY, staticFormsDelivery, staticFormsToCrm } from "../support/admin.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import { bootRetentionPassDone } from "../support/retention.js";
import { waitFor } from "../support/wait.js";
import { Metrics } from "../../src/observability/metrics.js";
import { PartitionsRepository } from "../../src/retention/partitions.repository.js";
import { RetentionWorker } from "../../src/retention/retention.worker.js";

const TABLES = ["receipt_payloads", "job_attempts", "lead_messages", "audit_entries"];
const DAY_MS = 86_400_000;

/** YYYYMM of the month `ahead` months after `date`'s (UTC). */
function monthName(date: Date, ahead = 0): string {
  const month = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + ahead, 1));
  return `${month.getUTCFullYear()}${String(month.getUTCMonth() + 1).padStart(2, "0")}`;
}

describe("partitioned history", () => {
  const answers = new Map<string, number>();
  const crm = useFakeServer({ status: 200, body: {} }, (request) => ({
    status: answers.get(request.path) ?? 200,
  }));
  const app = useApp({
    worker: true,
    env: {
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      DISPATCHER_INTERVAL_MS: "300",
      MESSAGE_RETENTION_DAYS: "30",
      AUDIT_RETENTION_DAYS: "30",
    },
  });
  const now = new Date();

  beforeAll(() => bootRetentionPassDone(app.worker));

  const partitionsOf = async (table: string) =>
    (
      await app.sql.query<{ name: string; bound: string }>(
        `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
         FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = $1::regclass ORDER BY 1`,
        [table],
      )
    ).rows;
  const partitionOfRow = async (sql: string, params: unknown[]) =>
    (await app.sql.query<{ part: string }>(sql, params)).rows.map((row) => row.part);
  const crmJob = async (connectionId: string) =>
    (
      await app.sql.query<{ id: string; status: string; receipt_id: string }>(
        "SELECT id, status, receipt_id FROM jobs WHERE connection_id = $1 AND operation = 'crm-delivery'",
        [connectionId],
      )
    ).rows[0];

  it("the migration made each table partitioned by month: this month, the next two, and DEFAULT", async () => {
    for (const table of TABLES) {
      const kind = await app.sql.query("SELECT relkind FROM pg_class WHERE oid = $1::regclass", [table]);
      expect(kind.rows).toEqual([{ relkind: "p" }]);
      const names = (await partitionsOf(table)).map((row) => row.name);
      expect(names).toEqual(
        expect.arrayContaining(
          [0, 1, 2].map((n) => `${table}_p${monthName(now, n)}`).concat(`${table}_default`),
        ),
      );
      expect((await partitionsOf(table)).find((row) => row.name === `${table}_default`)?.bound).toBe(
        "DEFAULT",
      );
    }
    // receipts keep the identity, unpartitioned, without the payload.
    const receipts = await app.sql.query(
      "SELECT relkind, EXISTS (SELECT 1 FROM pg_attribute WHERE attrelid = 'receipts'::regclass AND attname = 'raw_payload' AND NOT attisdropped) AS has_payload FROM pg_class WHERE oid = 'receipts'::regclass",
    );
    expect(receipts.rows).toEqual([{ relkind: "r", has_payload: false }]);
  });

  it("maintenance creates the months ahead once; a month without a partition lands in DEFAULT, then moves into its month", async () => {
    const partitions = app.worker.get(PartitionsRepository);
    const later = new Date(now.getTime() + 150 * DAY_MS);
    // A row of a month no partition holds yet: DEFAULT takes it instead of failing.
    await app.sql.query(
      "INSERT INTO audit_entries (action, target_type, created_at) VALUES ('test.later', 'test', $1)",
      [later],
    );
    // And one of a month beyond those that will be created (the worker's own passes may run meanwhile:
    // nothing in the future is old enough for them).
    await app.sql.query(
      "INSERT INTO audit_entries (action, target_type, created_at) VALUES ('test.beyond', 'test', $1)",
      [new Date(later.getTime() + 365 * DAY_MS)],
    );
    const where = "SELECT tableoid::regclass::text AS part FROM audit_entries WHERE action = $1";
    expect(await partitionOfRow(where, ["test.later"])).toEqual(["audit_entries_default"]);
    expect(await partitionOfRow(where, ["test.beyond"])).toEqual(["audit_entries_default"]);

    expect(await partitions.createAhead("audit_entries", now)).toBe(0);
    const before = await partitionsOf("audit_entries");
    expect(await partitions.createAhead("audit_entries", later)).toBeGreaterThanOrEqual(1);
    expect(await partitions.createAhead("audit_entries", later)).toBe(0);
    const after = await partitionsOf("audit_entries");
    expect(after.map((row) => row.name)).toEqual(
      expect.arrayContaining([0, 1, 2].map((n) => `audit_entries_p${monthName(later, n)}`)),
    );
    expect(after.length).toBeGreaterThan(before.length);
    // The row DEFAULT caught moved into its month's new partition; the other one stays in DEFAULT.
    expect(await partitionOfRow(where, ["test.later"])).toEqual([`audit_entries_p${monthName(later)}`]);
    expect(await partitionOfRow(where, ["test.beyond"])).toEqual(["audit_entries_default"]);
  });

  it("a drop that cannot get the table's lock within 1 s fails whole: the month stays attached, the next pass drops it", async () => {
    const partitions = app.worker.get(PartitionsRepository);
    const january = new Date("2025-01-01T00:00:00Z");
    await app.sql.query(
      "INSERT INTO audit_entries (action, target_type, created_at) VALUES ('test.locked', 'test', '2025-01-10T00:00:00Z')",
    );
    expect(await partitions.createAhead("audit_entries", january)).toBeGreaterThanOrEqual(1);
    const month = (await partitions.months("audit_entries")).find((m) => m.name === "audit_entries_p202501")!;
    const where = "SELECT tableoid::regclass::text AS part FROM audit_entries WHERE action = $1";
    expect(await partitionOfRow(where, ["test.locked"])).toEqual(["audit_entries_p202501"]);
    // A long reader of the table holds a lock the detach must wait for.
    const reader = await app.sql.connect();
    try {
      await reader.query("BEGIN");
      await reader.query("SELECT count(*) FROM audit_entries");
      await expect(partitions.dropMonth("audit_entries", month, now)).rejects.toMatchObject({
        code: "55P03",
      });
    } finally {
      await reader.query("ROLLBACK");
      reader.release();
    }
    expect((await partitionsOf("audit_entries")).map((row) => row.name)).toContain("audit_entries_p202501");
    expect(await partitionOfRow(where, ["test.locked"])).toEqual(["audit_entries_p202501"]);
    const drops = await app.sql.query(
      "SELECT 1 FROM partition_drops WHERE parent = 'audit_entries' AND range_start = $1",
      [january],
    );
    expect(drops.rowCount).toBe(0);

    expect(await partitions.dropMonth("audit_entries", month, now)).toBe(0);
    expect((await partitionsOf("audit_entries")).map((row) => row.name)).not.toContain(
      "audit_entries_p202501",
    );
    expect(await partitionOfRow(where, ["test.locked"])).toEqual([]);
  }, 20_000);

  it("a table whose drop cannot get its lock fails alone: the same pass drops the other tables' months, and counts it", async () => {
    const partitions = app.worker.get(PartitionsRepository);
    const january = new Date("2025-01-01T00:00:00Z");
    await app.sql.query(
      "INSERT INTO audit_entries (action, target_type, created_at) VALUES ('test.isolated', 'test', '2025-01-20T00:00:00Z')",
    );
    await partitions.createAhead("receipt_payloads", january);
    await partitions.createAhead("audit_entries", january);
    const where = "SELECT tableoid::regclass::text AS part FROM audit_entries WHERE action = $1";
    expect(await partitionOfRow(where, ["test.isolated"])).toEqual(["audit_entries_p202501"]);
    // The worker's counter, as its /metrics serves it.
    const failures = async () => {
      const text = await app.worker
        .get(Metrics)
        .registry.getSingleMetricAsString("leadgate_retention_failures_total");
      return Number(/table="receipt_payloads"} (\d+)/.exec(text)?.[1] ?? 0);
    };
    const failedBefore = await failures();
    // A long reader of receipt_payloads (the first table a pass retains) holds the lock its detach needs.
    const reader = await app.sql.connect();
    try {
      await reader.query("BEGIN");
      await reader.query("SELECT count(*) FROM receipt_payloads");
      await expect(app.worker.get(RetentionWorker).run()).rejects.toMatchObject({ code: "55P03" });
      expect((await partitionsOf("receipt_payloads")).map((row) => row.name)).toContain(
        "receipt_payloads_p202501",
      );
    } finally {
      await reader.query("ROLLBACK");
      reader.release();
    }
    expect((await partitionsOf("audit_entries")).map((row) => row.name)).not.toContain(
      "audit_entries_p202501",
    );
    expect(await partitionOfRow(where, ["test.isolated"])).toEqual([]);
    expect(await failures()).toBeGreaterThanOrEqual(failedBefore + 1);
  }, 20_000);

  it("drops an old month of payloads, messages and audit; a dead job's payload survives and still replays", async () => {
    const tenant = await createTenant(app.url);
    const connect = (path: string) => staticFormsToCrm(tenant.admin, app.url, crm.url, path);
    const done = await connect("/done");
    const failing = await connect("/failing");
    answers.set("/failing", 422);
    expect((await done.deliver("sub_done")).status).toBe(202);
    expect((await failing.deliver("sub_failing")).status).toBe(202);
    const succeeded = await waitFor(
      () => crmJob(done.id),
      (job) => job?.status === "succeeded",
    );
    const dead = await waitFor(
      () => crmJob(failing.id),
      (job) => job?.status === "dead",
    );
    const messages = async () =>
      Number(
        (
          await app.sql.query<{ n: string }>("SELECT count(*) AS n FROM lead_messages WHERE tenant_id = $1", [
            tenant.tenantId,
          ])
        ).rows[0]!.n,
      );
    expect(await messages()).toBe(2);
    // The lead of /done had an event lately (as seen from the pass below): its messages outlive the month.
    const later = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 2, 1) + 31 * DAY_MS);
    await app.sql.query("UPDATE leads SET last_event_at = $2 WHERE tenant_id = $1 AND connection_id = $3", [
      tenant.tenantId,
      new Date(later.getTime() - DAY_MS),
      done.id,
    ]);
    const audit = await app.sql.query<{ n: string }>(
      "SELECT count(*) AS n FROM audit_entries WHERE tenant_id = $1",
      [tenant.tenantId],
    );
    expect(Number(audit.rows[0]!.n)).toBeGreaterThan(0);

    // A pass two months on: this month is older than every window of 30 days.
    const pass = await app.worker.get(RetentionWorker).run(later);
    expect(pass.partitions).toBeGreaterThanOrEqual(3);
    for (const table of ["receipt_payloads", "lead_messages", "audit_entries"]) {
      expect((await partitionsOf(table)).map((row) => row.name)).not.toContain(`${table}_p${monthName(now)}`);
    }
    // Attempts go with their jobs' receipts (400 days): their month stays.
    expect((await partitionsOf("job_attempts")).map((row) => row.name)).toContain(
      `job_attempts_p${monthName(now)}`,
    );
    const drops = await app.sql.query<{ parent: string; survivors: number }>(
      "SELECT parent, survivors FROM partition_drops WHERE range_start = $1 ORDER BY parent",
      [new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1))],
    );
    expect(drops.rows.map((row) => row.parent)).toEqual([
      "audit_entries",
      "lead_messages",
      "receipt_payloads",
    ]);

    // The succeeded receipt's payload went with its month; the dead job's receipt kept its payload.
    const purged = await tenant.admin.get(`/admin/receipts/${succeeded!.receipt_id}`);
    expect(purged.status).toBe(200);
    expect(purged.body).toMatchObject({ payload: null, payloadPurgedAt: expect.any(String) });
    const kept = await tenant.admin.get(`/admin/receipts/${dead!.receipt_id}`);
    expect(kept.body).toMatchObject({ payloadPurgedAt: null, payload: expect.objectContaining({}) });
    expect(JSON.stringify(kept.body.payload)).toContain("gutter cleaning");
    expect(
      await partitionOfRow(
        "SELECT tableoid::regclass::text AS part FROM receipt_payloads WHERE receipt_id = $1",
        [dead!.receipt_id],
      ),
    ).toEqual(["receipt_payloads_default"]);
    const listed = await tenant.admin.get(`/admin/receipts?connectionId=${done.id}`);
    expect(listed.body.items).toEqual([
      expect.objectContaining({ payloadPurgedAt: purged.body.payloadPurgedAt }),
    ]);

    // Messages: only the active lead's survived (in DEFAULT); audit of this month is gone.
    expect(await messages()).toBe(1);
    const left = await app.sql.query(
      "SELECT m.tableoid::regclass::text AS part FROM lead_messages m JOIN leads l ON l.id = m.lead_id WHERE m.tenant_id = $1 AND l.connection_id = $2",
      [tenant.tenantId, done.id],
    );
    expect(left.rows).toEqual([{ part: "lead_messages_default" }]);
    const gone = await app.sql.query<{ n: string }>(
      "SELECT count(*) AS n FROM audit_entries WHERE tenant_id = $1",
      [tenant.tenantId],
    );
    expect(Number(gone.rows[0]!.n)).toBe(0);

    // The dead job replays with the payload it kept.
    answers.set("/failing", 200);
    const replayed = await tenant.admin.post(`/admin/jobs/${dead!.id}/replay`);
    expect(replayed.status).toBe(202);
    await waitFor(
      () => crmJob(failing.id),
      (job) => job?.status === "succeeded",
    );
    const delivered = crm.received.filter((request) => request.path === "/failing");
    expect(delivered.at(-1)!.body).toContain("gutter cleaning");
  });

  it("a re-delivery of a 60-day-old event is still a duplicate: the identity outlives the payload", async () => {
    const tenant = await createTenant(app.url);
    const created = await tenant.admin.post("/admin/connections", {
      provider: "staticforms",
      externalAccountId: "form-old",
      displayName: "old",
      inboundAuth: { type: "bearer" },
    });
    const id = created.body.connection.id as string;
    const deliver = () =>
      post(`${app.url}/webhooks/staticforms/${id}`, staticFormsDelivery("sub_sixty_days"), {
        authorization: `Bearer ${created.body.secrets.bearerToken as string}`,
      });
    const first = await deliver();
    expect(first.status).toBe(202);
    const receiptId = first.body.receiptIds[0] as string;
    await waitFor(
      async () =>
        (
          await app.sql.query<{ status: string }>("SELECT status FROM jobs WHERE receipt_id = $1", [
            receiptId,
          ])
        ).rows,
      (rows) => rows.length > 0 && rows.every((row) => row.status === "succeeded"),
    );
    await app.sql.query(
      `WITH r AS (UPDATE receipts SET received_at = now() - interval '60 days' WHERE id = $1 RETURNING id, received_at)
       UPDATE receipt_payloads p SET received_at = r.received_at FROM r WHERE p.receipt_id = r.id`,
      [receiptId],
    );
    await app.worker.get(RetentionWorker).run();
    const detail = await tenant.admin.get(`/admin/receipts/${receiptId}`);
    expect(detail.body).toMatchObject({ payload: null, payloadPurgedAt: expect.any(String) });

    const again = await deliver();
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ duplicate: true, receiptIds: [receiptId] });
  });

  it("drops a month of attempts after the receipts' window; the attempts of a job that still exists survive", async () => {
    const tenant = await createTenant(app.url);
    const created = await tenant.admin.post("/admin/connections", {
      provider: "staticforms",
      externalAccountId: "form-attempts",
      displayName: "attempts",
      inboundAuth: { type: "bearer" },
    });
    const connectionId = created.body.connection.id as string;
    const first = await post(
      `${app.url}/webhooks/staticforms/${connectionId}`,
      staticFormsDelivery("sub_attempts"),
      {
        authorization: `Bearer ${created.body.secrets.bearerToken as string}`,
      },
    );
    const receiptId = first.body.receiptIds[0] as string;
    const jobs = await waitFor(
      async () =>
        (
          await app.sql.query<{ id: string; status: string }>(
            "SELECT id, status FROM jobs WHERE receipt_id = $1",
            [receiptId],
          )
        ).rows,
      (rows) => rows.length > 0 && rows.every((row) => row.status === "succeeded"),
    );
    // As if each had failed once before it succeeded (a success writes no attempt row): this month's rows.
    await app.sql.query(
      `WITH job AS (UPDATE jobs SET attempts = attempts + 1 WHERE receipt_id = $1 RETURNING tenant_id, id, created_at)
       INSERT INTO job_attempts (tenant_id, job_id, job_created_at, number, started_at, finished_at, outcome, error_code)
       SELECT tenant_id, id, created_at, 1, now(), now(), 'retryable', 'http_503' FROM job`,
      [receiptId],
    );
    // A connection's job (no receipt: retention never deletes it) with an attempt of this month.
    const [kept] = (
      await app.sql.query<{ id: string }>(
        `WITH job AS (
           INSERT INTO jobs (tenant_id, connection_id, operation, job_key, status, attempts, max_attempts)
           VALUES ($1, $2, 'reconciliation', 'reconciliation:test-attempts', 'succeeded', 1, 6) RETURNING id, tenant_id, created_at
         )
         INSERT INTO job_attempts (tenant_id, job_id, job_created_at, number, started_at, finished_at, outcome)
         SELECT tenant_id, id, created_at, 1, now(), now(), 'succeeded' FROM job RETURNING job_id AS id`,
        [tenant.tenantId, connectionId],
      )
    ).rows;
    const attemptsOf = async (ids: string[]) =>
      (
        await app.sql.query<{ part: string; job_id: string }>(
          "SELECT tableoid::regclass::text AS part, job_id FROM job_attempts WHERE job_id = ANY($1::uuid[])",
          [ids],
        )
      ).rows;
    expect(await attemptsOf(jobs.map((job) => job.id))).toHaveLength(jobs.length);

    // A pass more than RECEIPT_RETENTION_DAYS after this month ended.
    const far = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) + 401 * DAY_MS);
    const pass = await app.worker.get(RetentionWorker).run(far);
    expect(pass.receipts).toBeGreaterThanOrEqual(1);
    expect((await partitionsOf("job_attempts")).map((row) => row.name)).not.toContain(
      `job_attempts_p${monthName(now)}`,
    );
    expect(await attemptsOf(jobs.map((job) => job.id))).toEqual([]);
    expect(await attemptsOf([kept!.id])).toEqual([{ part: "job_attempts_default", job_id: kept!.id }]);
    const detail = await tenant.admin.get(`/admin/jobs/${kept!.id}`);
    expect(detail.body.attemptHistory).toEqual([
      expect.objectContaining({ number: 1, outcome: "succeeded" }),
    ]);
  });
});
