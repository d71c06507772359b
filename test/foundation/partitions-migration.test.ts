// The partitioned-history migration on an existing install: a database at the previous head with
// rows in every table it converts keeps them all (copy-and-swap), each in its month's partition,
// and the unique keys that decide races still refuse a second row. Every migration is applied as
// `prisma migrate deploy` applies it: by the driver adapter of prisma.config.ts, whose
// executeScript runs each piece between semicolons as its own statement, outside any transaction.
import { deploy, deployBefore } from "../support/migrations.js";
import { createEmptyDatabase, type TestDatabase } from "../support/database.js";

const PARTITIONED = "20261212000000_partitioned_history";

describe("partitioned history migration (copy-and-swap)", () => {
  let db: TestDatabase;
  const old = new Date(Date.UTC(2026, 6, 15, 12)); // July 2026: a month before the migration's "now"

  beforeAll(async () => {
    db = await createEmptyDatabase();
    await deployBefore(db.url, PARTITIONED);
  });
  afterAll(() => db.drop());
  const q = async <T extends object>(text: string, values: unknown[] = []) =>
    (await db.sql.query<T & Record<string, unknown>>(text, values)).rows;

  it("changes nothing when it fails mid-way, then keeps every row in its month partition, with unique keys", async () => {
    const [tenant] = await q<{ id: string }>("INSERT INTO tenants (name) VALUES ('t') RETURNING id");
    const [connection] = await q<{ id: string }>(
      `INSERT INTO connections (tenant_id, provider, external_account_id, display_name, inbound_auth)
       VALUES ($1, 'staticforms', 'acct', 'c', '{"type":"bearer"}') RETURNING id`,
      [tenant!.id],
    );
    const receipt = async (key: string, receivedAt: Date, payload: object | null) =>
      (
        await q<{ id: string }>(
          `INSERT INTO receipts (tenant_id, connection_id, provider, account_id, idempotency_key, lead_id, kind, status,
                                 occurred_at, payload_digest, raw_payload, received_at, payload_purged_at)
           VALUES ($1, $2, 'staticforms', 'acct', $3, 'lead-1', 'lead.created', 'accepted', $4::timestamptz, 'd',
                   $5::jsonb, $4::timestamptz, CASE WHEN $5::jsonb IS NULL THEN $4::timestamptz END) RETURNING id`,
          [tenant!.id, connection!.id, key, receivedAt, payload === null ? null : JSON.stringify(payload)],
        )
      )[0]!.id;
    const oldReceipt = await receipt("k-old", old, { formData: { name: "old" } });
    const newReceipt = await receipt("k-new", new Date(), { formData: { name: "new" } });
    const purgedReceipt = await receipt("k-purged", old, null);
    const [job] = await q<{ id: string }>(
      `INSERT INTO jobs (tenant_id, connection_id, receipt_id, operation, job_key, status, max_attempts, created_at)
       VALUES ($1, $2, $3, 'lead-upsert', 'lead-upsert:k-old', 'dead', 6, $4) RETURNING id`,
      [tenant!.id, connection!.id, oldReceipt, old],
    );
    await q(
      `INSERT INTO job_attempts (tenant_id, job_id, number, started_at, finished_at, outcome)
       VALUES ($1, $2, 1, $3, $3, 'retryable'), ($1, $2, 2, $3, $3, 'permanent')`,
      [tenant!.id, job!.id, old],
    );
    const [lead] = await q<{ id: string }>(
      `INSERT INTO leads (tenant_id, connection_id, provider, external_lead_id, last_event_at, created_at)
       VALUES ($1, $2, 'staticforms', 'lead-1', $3, $3) RETURNING id`,
      [tenant!.id, connection!.id, old],
    );
    await q(
      `INSERT INTO lead_messages (tenant_id, lead_id, external_id, direction, text, sent_at, position)
       VALUES ($1, $2, 'm1', 'inbound', 'hello', $3, 1), ($1, $2, 'm2', 'outbound', 'hi', now(), 2)`,
      [tenant!.id, lead!.id, old],
    );
    await q(
      `INSERT INTO audit_entries (tenant_id, action, target_type, target_id, created_at)
       VALUES ($1, 'connection.create', 'connection', $2, $3), ($1, 'connection.update', 'connection', $2, now())`,
      [tenant!.id, connection!.id, old],
    );

    // A failure mid-way (here the last table's rename, after three tables were converted) changes
    // nothing: the conversion is one statement.
    await db.sql.query("CREATE TABLE audit_entries_unpartitioned (blocker int)");
    await expect(deploy(db.url, PARTITIONED)).rejects.toThrow();
    const relkinds = await q<{ relname: string; relkind: string }>(
      `SELECT relname, relkind::text FROM pg_class
       WHERE relname IN ('receipts', 'job_attempts', 'lead_messages', 'audit_entries', 'receipt_payloads',
                         'partition_drops', 'job_attempts_unpartitioned', 'lead_messages_unpartitioned')
       ORDER BY relname`,
    );
    expect(relkinds.map((row) => [row.relname, row.relkind])).toEqual([
      ["audit_entries", "r"],
      ["job_attempts", "r"],
      ["lead_messages", "r"],
      ["receipts", "r"],
    ]);
    const before = await q<{ payload: unknown }>(
      "SELECT raw_payload AS payload FROM receipts ORDER BY received_at",
    );
    expect(before.map((row) => row.payload)).toEqual([
      { formData: { name: "old" } },
      null,
      { formData: { name: "new" } },
    ]);
    const counts = await q<{ attempts: number; messages: number; audit: number }>(
      `SELECT (SELECT count(*)::int FROM job_attempts) AS attempts, (SELECT count(*)::int FROM lead_messages) AS messages,
              (SELECT count(*)::int FROM audit_entries) AS audit`,
    );
    expect(counts).toEqual([{ attempts: 2, messages: 2, audit: 2 }]);
    // The cause removed (and the migration marked rolled back), the same file applies.
    await db.sql.query("DROP TABLE audit_entries_unpartitioned");
    await deploy(db.url, PARTITIONED);

    const where = (table: string) => `SELECT tableoid::regclass::text AS part, * FROM ${table}`;
    const payloads = await q<{ part: string; receipt_id: string; payload: unknown }>(
      `${where("receipt_payloads")} ORDER BY received_at`,
    );
    const month = (date: Date) =>
      `${date.getUTCFullYear()}${String(date.getUTCMonth() + 1).padStart(2, "0")}`;
    expect(payloads.map((row) => [row.part, row.receipt_id, row.payload])).toEqual([
      ["receipt_payloads_p202607", oldReceipt, { formData: { name: "old" } }],
      [`receipt_payloads_p${month(new Date())}`, newReceipt, { formData: { name: "new" } }],
    ]);
    const receipts = await q<{ id: string; payload_purged_at: Date | null }>(
      "SELECT id, payload_purged_at FROM receipts ORDER BY received_at, idempotency_key",
    );
    expect(receipts.map((row) => [row.id, row.payload_purged_at !== null])).toEqual([
      [oldReceipt, false],
      [purgedReceipt, true],
      [newReceipt, false],
    ]);
    const attempts = await q<{ part: string; number: number; job_created_at: Date }>(
      `${where("job_attempts")} ORDER BY number`,
    );
    expect(attempts.map((row) => [row.part, row.number, row.job_created_at.toISOString()])).toEqual([
      ["job_attempts_p202607", 1, old.toISOString()],
      ["job_attempts_p202607", 2, old.toISOString()],
    ]);
    const messages = await q<{ part: string; external_id: string; lead_created_at: Date; position: number }>(
      `${where("lead_messages")} ORDER BY external_id`,
    );
    expect(
      messages.map((row) => [row.part, row.external_id, row.lead_created_at.toISOString(), row.position]),
    ).toEqual([
      ["lead_messages_p202607", "m1", old.toISOString(), 1],
      ["lead_messages_p202607", "m2", old.toISOString(), 2],
    ]);
    const audit = await q<{ part: string; action: string }>(`${where("audit_entries")} ORDER BY created_at`);
    expect(audit.map((row) => [row.part, row.action])).toEqual([
      ["audit_entries_p202607", "connection.create"],
      [`audit_entries_p${month(new Date())}`, "connection.update"],
    ]);
    // Every month from the oldest row's to two after the current one, and DEFAULT.
    const parts = await q<{ name: string }>(
      "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = 'audit_entries'::regclass ORDER BY 1",
    );
    expect(parts.map((row) => row.name)).toEqual(
      expect.arrayContaining(["audit_entries_default", "audit_entries_p202607", "audit_entries_p202608"]),
    );

    // Each DEFAULT partition has an index of its own on its key (retention purges its old rows by it).
    const indexes = await q<{ indexdef: string }>(
      `SELECT indexdef FROM pg_indexes WHERE tablename LIKE '%\\_default'
       AND NOT EXISTS (SELECT 1 FROM pg_inherits WHERE inhrelid = indexname::regclass) ORDER BY tablename`,
    );
    expect(indexes.map((row) => row.indexdef.replace(/^.* USING /, ""))).toEqual([
      "btree (created_at)",
      "btree (job_created_at)",
      "btree (lead_created_at)",
      "btree (received_at)",
    ]);

    // The race-deciding keys: a second attempt number 2 or message m1 of the same job / lead is refused.
    await expect(
      q(
        `INSERT INTO job_attempts (tenant_id, job_id, job_created_at, number, started_at)
         VALUES ($1, $2, $3, 2, now())`,
        [tenant!.id, job!.id, old],
      ),
    ).rejects.toMatchObject({ code: "23505" });
    const upsert = await db.sql.query(
      `INSERT INTO lead_messages (tenant_id, lead_id, lead_created_at, external_id, direction, sent_at)
       VALUES ($1, $2, $3, 'm1', 'inbound', now()) ON CONFLICT (lead_id, external_id, lead_created_at) DO NOTHING`,
      [tenant!.id, lead!.id, old],
    );
    expect(upsert.rowCount).toBe(0);
    // The old tables are gone.
    const leftovers = await q("SELECT relname FROM pg_class WHERE relname LIKE '%_unpartitioned%'");
    expect(leftovers).toEqual([]);
  });
});
