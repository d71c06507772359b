// Ingest at scale: requests/s of an API whose database already holds 1,000,000 receipts (each with
// a finished job) against one whose database is empty, alternated A B A B A B on one machine, and
// each API's memory (RSS) before and during the load. Prints figures, asserts nothing.
// Needs `npm run build` (done by `npm run bench`) and local Postgres and Redis.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import pg from "pg";
import { LOOPBACK_CRM_ENV, createConnection, dropRedisKeys, start, migratedDatabase } from "./processes.mjs";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const STORED = Number(process.env.BENCH_STORED_RECEIPTS ?? 1_000_000);
const ENCRYPTION_KEY = Buffer.alloc(32, 9).toString("base64");
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const mib = (kib) => Math.round(kib / 1024);

function rssKib(pid) {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return match ? Number(match[1]) : 0;
}

async function prepare(name, port, fill) {
  const url = await migratedDatabase(name);
  const env = {
    DATABASE_URL: url,
    LEADGATE_ENCRYPTION_KEY: ENCRYPTION_KEY,
    REDIS_PREFIX: `lg-bench-scale-${name}-${process.pid}`,
    PORT: String(port),
    WEBHOOK_RATE_LIMIT: "10000000",
    ...LOOPBACK_CRM_ENV,
  };
  const connection = createConnection(env);
  if (fill) {
    const started = Date.now();
    const sql = new pg.Client({ connectionString: url });
    await sql.connect();
    const { rows } = await sql.query("SELECT tenant_id FROM connections WHERE id = $1", [connection.id]);
    // Stored history: Static Forms receipts as ingest writes them, each with its succeeded lead upsert.
    await sql.query(
      `WITH receipt AS (
         INSERT INTO receipts (tenant_id, connection_id, provider, account_id, idempotency_key, event_id, lead_id, kind,
                               status, occurred_at, payload_digest, received_at)
         SELECT $1, $2, 'staticforms', 'bench-history', encode(sha256(n::text::bytea), 'hex'), 'hist_' || n, 'hist_' || n,
                'lead.created', 'accepted', now() - make_interval(secs => n), encode(sha256(('p' || n)::bytea), 'hex'),
                now() - make_interval(secs => n)
         FROM generate_series(1, $3) AS n
         RETURNING id, tenant_id, received_at, event_id
       )
       INSERT INTO receipt_payloads (receipt_id, tenant_id, received_at, payload)
       SELECT id, tenant_id, received_at,
              jsonb_build_object('formData', jsonb_build_object('name', 'Person ' || event_id, 'email', event_id || '@example.test'))
       FROM receipt`,
      [rows[0].tenant_id, connection.id, STORED],
    );
    await sql.query(
      `INSERT INTO jobs (tenant_id, connection_id, receipt_id, operation, job_key, status, attempts, max_attempts, completed_at)
       SELECT tenant_id, connection_id, id, 'lead-upsert', 'lead-upsert:' || idempotency_key, 'succeeded', 1, 6, received_at
       FROM receipts WHERE account_id = 'bench-history'`,
    );
    await sql.query("VACUUM ANALYZE receipts");
    await sql.query("VACUUM ANALYZE jobs");
    await sql.end();
    console.log(
      `stored ${STORED.toLocaleString("en")} receipts and jobs in ${Math.round((Date.now() - started) / 1000)} s`,
    );
  }
  const api = await start("dist/main.js", env, /api listening/);
  return {
    env,
    api,
    target: [
      `http://127.0.0.1:${port}/webhooks/staticforms/${connection.id}`,
      `Bearer ${connection.bearerToken}`,
    ],
  };
}

async function main() {
  const empty = await prepare("leadgate_bench_empty", 3110, false);
  const full = await prepare("leadgate_bench_full", 3111, true);
  const targets = { empty, full };
  try {
    const idle = Object.fromEntries(Object.entries(targets).map(([name, t]) => [name, rssKib(t.api.pid)]));
    for (const t of Object.values(targets)) {
      execFileSync(process.execPath, ["bench/load.mjs", t.target[0], "3", String(CONNECTIONS), t.target[1]]);
    }
    const results = { empty: [], full: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of ["empty", "full"]) {
        // The sampling timer cannot fire while execFileSync blocks: sample from a child instead.
        const pid = targets[name].api.pid;
        const sampler = execFileSync(
          "bash",
          [
            "-c",
            `( for i in $(seq ${SECONDS * 4}); do grep VmRSS /proc/${pid}/status; sleep 0.25; done ) & node bench/load.mjs ${targets[name].target[0]} ${SECONDS} ${CONNECTIONS} '${targets[name].target[1]}'; wait`,
          ],
          { encoding: "utf8" },
        )
          .trim()
          .split("\n");
        const result = JSON.parse(sampler.filter((line) => line.startsWith("{")).pop());
        const peak = Math.max(
          ...sampler.filter((line) => line.startsWith("VmRSS")).map((line) => Number(/(\d+)/.exec(line)[1])),
        );
        results[name].push({ ...result, peakKib: peak });
        console.log(
          JSON.stringify({
            round: round + 1,
            database: name,
            rps: Math.round(result.rps),
            p50: result.p50,
            p99: result.p99,
            statuses: result.statuses,
            errors: result.errors,
            peakRssMiB: mib(peak),
          }),
        );
      }
    }
    const summary = (name) => ({
      rps: median(results[name].map((r) => r.rps)),
      p99: median(results[name].map((r) => r.p99)),
      peak: Math.max(...results[name].map((r) => r.peakKib)),
    });
    const a = summary("empty");
    const b = summary("full");
    console.log(
      `\ningest with ${STORED.toLocaleString("en")} receipts stored vs an empty database (${CONNECTIONS} connections, ${SECONDS} s x ${ROUNDS}, medians)`,
    );
    console.log(
      `  empty: ${Math.round(a.rps)} req/s  p99 ${a.p99} ms  API memory ${mib(idle.empty)} MiB idle, ${mib(a.peak)} MiB peak`,
    );
    console.log(
      `  full:  ${Math.round(b.rps)} req/s  p99 ${b.p99} ms  API memory ${mib(idle.full)} MiB idle, ${mib(b.peak)} MiB peak`,
    );
    console.log(`  full/empty: ${(b.rps / a.rps).toFixed(2)}x requests/s (target: within 10%)`);
  } finally {
    for (const t of Object.values(targets)) {
      t.api.kill("SIGTERM");
      await dropRedisKeys(`${t.env.REDIS_PREFIX}:*`);
    }
  }
}

await main();
