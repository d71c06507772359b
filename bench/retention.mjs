// `npm run bench` (retention): forgetting one month of payloads at 1 M receipts (BENCH_RETENTION_ROWS),
// the way retention did it before partitioned history (the batched UPDATE of receipts that nulled
// raw_payload, 1,000 a statement) and the way it does now (src/retention/partitions.repository.ts
// dropMonth: detach the month of receipt_payloads, keep its survivors, drop it). Each on a fresh
// database of its own, rows generated in SQL (generate_series): time, and WAL bytes written
// (pg_current_wal_lsn before and after, after a CHECKPOINT). The WAL position is the whole server's:
// run it on a quiet server. Then the time of the copy-and-swap migration on a database at the previous
// head with as many payloads and attempts. Prints figures, asserts nothing. Needs `npm run build`.
import { readdirSync, readFileSync } from "node:fs";
import pg from "pg";
import { dropDatabase, freshDatabase, migratedDatabase } from "./processes.mjs";
import { PartitionsRepository } from "../dist/retention/partitions.repository.js";

const ROWS = Number(process.env.BENCH_RETENTION_ROWS ?? 1_000_000);
const BATCH = 1_000;
const PARTITIONED = "20261212000000_partitioned_history";
const TENANT = "00000000-0000-4000-8000-000000000001";
const CONNECTION = "00000000-0000-4000-8000-000000000002";
// The month to forget: three months ago (UTC), and the window's cutoff 30 days ago.
const now = new Date();
const monthStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 3, 1));
const monthEnd = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 2, 1));
const cutoff = new Date(now.getTime() - 30 * 86_400_000);

// Static Forms' normalized payload, about 300 bytes: what ingest stores.
const PAYLOAD = `jsonb_build_object('formData', jsonb_build_object('name', 'Person ' || n, 'email', 'p' || n || '@example.test',
  'phone', '+1 512 555 0142', 'subject', 'Quote request', 'message', 'Need a quote for gutter cleaning, single story.'),
  'submissionId', 'sub_' || n)`;
const RECEIVED_AT = `$1::timestamptz + (($2::timestamptz - $1::timestamptz) * n / ${ROWS + 1})`;
const RECEIPT_COLUMNS = `tenant_id, connection_id, provider, account_id, idempotency_key, event_id, lead_id, kind, status,
  occurred_at, payload_digest, received_at`;
const RECEIPT_VALUES = `'${TENANT}'::uuid, '${CONNECTION}'::uuid, 'staticforms', 'bench', md5(n::text), 'sub_' || n, 'sub_' || n,
  'lead.created', 'accepted', ${RECEIVED_AT}, md5('p' || n), ${RECEIVED_AT}`;
// Each receipt has its job, succeeded, except about 1 in 256 dead (a replay may need its payload: it
// survives the month).
const JOBS = `INSERT INTO jobs (tenant_id, connection_id, receipt_id, operation, job_key, status, attempts, max_attempts,
  completed_at, created_at)
  SELECT tenant_id, connection_id, id, 'lead-upsert', 'lead-upsert:' || idempotency_key,
         CASE WHEN idempotency_key LIKE '%00' THEN 'dead' ELSE 'succeeded' END, 1, 6, received_at, received_at
  FROM receipts`;

/** The payload purge as retention ran it before partitioned history (git: src/retention/retention.repository.ts). */
const BEFORE_PURGE = `UPDATE receipts SET raw_payload = NULL, payload_purged_at = now()
  WHERE id IN (
    SELECT r.id FROM receipts r
    WHERE r.received_at < $1 AND r.payload_purged_at IS NULL
      AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.receipt_id = r.id AND j.tenant_id = r.tenant_id
                      AND j.status IN ('queued', 'running', 'retrying', 'waiting', 'dead', 'blocked', 'held', 'cancelled'))
    ORDER BY r.received_at LIMIT $2)`;

async function measured(client, work) {
  await client.query("CHECKPOINT");
  const { rows } = await client.query("SELECT pg_current_wal_lsn() AS lsn");
  const started = performance.now();
  const result = await work();
  const seconds = (performance.now() - started) / 1000;
  const wal = await client.query("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::bigint AS bytes", [
    rows[0].lsn,
  ]);
  return { seconds, walBytes: Number(wal.rows[0].bytes), result };
}

const migrationSql = (name) => readFileSync(`prisma/migrations/${name}/migration.sql`, "utf8");

/** A database at the schema before partitioned history, with ROWS receipts (payloads) and jobs. */
async function previousHead(client) {
  const names = readdirSync("prisma/migrations").filter((n) => /^\d{14}_/.test(n) && n < PARTITIONED);
  for (const name of names.sort()) await client.query(migrationSql(name));
  await client.query(
    `INSERT INTO receipts (${RECEIPT_COLUMNS}, raw_payload)
     SELECT ${RECEIPT_VALUES}, ${PAYLOAD} FROM generate_series(1, ${ROWS}) AS n`,
    [monthStart, monthEnd],
  );
  await client.query(JOBS);
  await client.query("VACUUM ANALYZE");
}

/** The copy-and-swap migration on an existing install: ROWS payloads and ROWS attempts. */
async function migration() {
  const url = await freshDatabase("leadgate_bench_retention_migration");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await previousHead(client);
    await client.query(
      `INSERT INTO job_attempts (tenant_id, job_id, number, started_at, finished_at, outcome)
       SELECT tenant_id, id, 1, created_at, created_at, 'succeeded' FROM jobs`,
    );
    const started = performance.now();
    await client.query(`BEGIN; ${migrationSql(PARTITIONED)}; COMMIT`);
    return (performance.now() - started) / 1000;
  } finally {
    await client.end();
    await dropDatabase(url);
  }
}

async function before() {
  const url = await freshDatabase("leadgate_bench_retention_before");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await previousHead(client);
    return await measured(client, async () => {
      let purged = 0;
      for (let n = BATCH; n === BATCH; purged += n) {
        n = (await client.query(BEFORE_PURGE, [cutoff, BATCH])).rowCount;
      }
      return purged;
    });
  } finally {
    await client.end();
    await dropDatabase(url);
  }
}

async function after() {
  const url = await migratedDatabase("leadgate_bench_retention_after");
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  // The database is dropped WITH (FORCE) at the end, maybe before an idle connection has closed.
  pool.on("error", () => undefined);
  const client = await pool.connect();
  try {
    await client.query("SELECT leadgate_create_month_partition('receipt_payloads', $1)", [monthStart]);
    await client.query(
      `WITH receipt AS (
         INSERT INTO receipts (${RECEIPT_COLUMNS}) SELECT ${RECEIPT_VALUES} FROM generate_series(1, ${ROWS}) AS n
         RETURNING id, tenant_id, received_at, event_id
       )
       INSERT INTO receipt_payloads (receipt_id, tenant_id, received_at, payload)
       SELECT id, tenant_id, received_at, ${PAYLOAD.replaceAll("|| n", "|| substr(event_id, 5)")} FROM receipt`,
      [monthStart, monthEnd],
    );
    await client.query(JOBS);
    await client.query("VACUUM ANALYZE");
    const partitions = new PartitionsRepository({ pool });
    const [month] = (await partitions.months("receipt_payloads")).filter(
      (m) => m.start.getTime() === monthStart.getTime(),
    );
    return await measured(client, () => partitions.dropMonth("receipt_payloads", month, cutoff));
  } finally {
    client.release();
    await pool.end();
    await dropDatabase(url);
  }
}

const mb = (bytes) => `${(bytes / 1_048_576).toFixed(1)} MB`;
const old = await before();
const now_ = await after();
const migrated = await migration();
console.log(`retention of one month of payloads at ${ROWS.toLocaleString("en")} receipts`);
console.log(`| how | time | WAL |`);
console.log(`|---|---|---|`);
console.log(
  `| batched UPDATE of receipts (before: ${old.result.toLocaleString("en")} payloads purged) | ${old.seconds.toFixed(2)} s | ${mb(old.walBytes)} |`,
);
console.log(
  `| detach + drop the month of receipt_payloads (now: ${now_.result.toLocaleString("en")} survivors kept) | ${now_.seconds.toFixed(3)} s | ${mb(now_.walBytes)} |`,
);
console.log(
  `the copy-and-swap migration of ${ROWS.toLocaleString("en")} payloads and ${ROWS.toLocaleString("en")} attempts: ${migrated.toFixed(1)} s`,
);
