// End-to-end throughput: N Static Forms deliveries (default 5,000) through Leadgate's API and worker
// processes to a fake CRM on loopback, from the first request to the last job `succeeded`.
// Prints events/s, the p50/p99 of acknowledgement-to-done, and what each event cost: commits and rows
// written in this run's database (pg_stat_database, its own database, so other work on the server does
// not count) and Redis commands (INFO stats: server-wide, so only meaningful on a quiet server).
// Needs `npm run build`.
import { execFileSync } from "node:child_process";
import { LOOPBACK_CRM_ENV, dropRedisKeys, freshDatabase, start } from "./processes.mjs";
import { createServer } from "node:http";
import { Redis } from "ioredis";
import pg from "pg";

const EVENTS = Number(process.env.BENCH_E2E_EVENTS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ENCRYPTION_KEY = Buffer.alloc(32, 9).toString("base64");

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function main() {
  const crmIds = new Map();
  const crm = createServer((request, response) => {
    const id = request.headers["webhook-id"];
    crmIds.set(id, (crmIds.get(id) ?? 0) + 1);
    request.resume();
    request.on("end", () => response.writeHead(200).end());
  });
  await new Promise((resolve) => crm.listen(0, "127.0.0.1", resolve));

  const databaseUrl = await freshDatabase("leadgate_bench_e2e");
  execFileSync(process.execPath, ["scripts/migrate.mjs"], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: "ignore",
  });
  const env = {
    DATABASE_URL: databaseUrl,
    LEADGATE_ENCRYPTION_KEY: ENCRYPTION_KEY,
    REDIS_PREFIX: `lg-bench-e2e-${process.pid}`,
    PORT: "3102",
    WEBHOOK_RATE_LIMIT: "10000000", // one connection sends the whole load
    ...LOOPBACK_CRM_ENV,
  };
  const connection = JSON.parse(
    execFileSync(process.execPath, ["bench/create-connection.mjs"], {
      env: { ...process.env, ...env, BENCH_CRM_URL: `http://127.0.0.1:${crm.address().port}/crm` },
      encoding: "utf8",
    })
      .trim()
      .split("\n")
      .pop(),
  );
  const api = await start("dist/main.js", env, /api listening/);
  const worker = await start("dist/worker.js", env, /worker started/);
  const sql = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const redis = new Redis();
  const counters = async () => {
    const { rows } = await sql.query(
      `SELECT xact_commit::float8 AS commits, tup_inserted::float8 AS inserted, tup_updated::float8 AS updated,
              tup_deleted::float8 AS deleted
       FROM pg_stat_database WHERE datname = current_database()`,
    );
    const commands = Number(/total_commands_processed:(\d+)/.exec(await redis.info("stats"))[1]);
    return { ...rows[0], commands };
  };
  try {
    const before = await counters();
    const url = `http://127.0.0.1:3102/webhooks/staticforms/${connection.id}`;
    const acked = new Map();
    let next = 0;
    const started = Date.now();
    const sender = async () => {
      while (next < EVENTS) {
        const id = `e2e-${next++}`;
        const response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${connection.bearerToken}` },
          body: JSON.stringify({
            event: "form.submitted",
            data: { submissionId: id, formData: { name: "Load", email: "l@example.test", message: "hi" } },
          }),
        });
        await response.arrayBuffer();
        if (response.status !== 202) throw new Error(`unexpected ${response.status}`);
        acked.set(id, Date.now());
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, sender));
    const ingestedAt = Date.now();
    const expectedJobs = EVENTS * 2;
    for (;;) {
      const { rows } = await sql.query(
        "SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS done, count(*) FILTER (WHERE status IN ('dead','blocked'))::int AS failed FROM jobs",
      );
      if (rows[0].done + rows[0].failed >= expectedJobs) break;
      if (Date.now() - started > 600_000) throw new Error(`timed out: ${JSON.stringify(rows[0])}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Backends flush their statistics at most once a second when idle: let them.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    const after = await counters();
    const perEvent = (key) => ((after[key] - before[key]) / EVENTS).toFixed(1);
    const { rows } = await sql.query(
      `SELECT r.event_id, (extract(epoch FROM max(j.completed_at)) * 1000)::float8 AS done_ms, count(*) FILTER (WHERE j.status <> 'succeeded')::int AS failed
       FROM receipts r JOIN jobs j ON j.receipt_id = r.id GROUP BY r.id`,
    );
    const lastDone = Math.max(...rows.map((row) => row.done_ms));
    const latencies = rows.map((row) => row.done_ms - acked.get(row.event_id)).sort((a, b) => a - b);
    const failed = rows.reduce((sum, row) => sum + row.failed, 0);
    const twice = [...crmIds.values()].filter((count) => count > 1).length;
    console.log(
      `\nend to end (${EVENTS} Static Forms deliveries, ${CONCURRENCY} connections; lead-upsert + crm-delivery each)`,
    );
    console.log(
      `  ingest: ${Math.round(EVENTS / ((ingestedAt - started) / 1000))} deliveries/s acknowledged`,
    );
    console.log(
      `  done:   ${Math.round(EVENTS / ((lastDone - started) / 1000))} events/s fully processed (${((lastDone - started) / 1000).toFixed(1)} s)`,
    );
    console.log(
      `  ack to done: p50 ${Math.round(percentile(latencies, 50))} ms, p99 ${Math.round(percentile(latencies, 99))} ms`,
    );
    console.log(`  jobs not succeeded: ${failed}; CRM deliveries ${crmIds.size}, received twice: ${twice}`);
    console.log(
      `  per event: ${perEvent("commits")} commits, ${perEvent("inserted")} rows inserted, ${perEvent("updated")} updated, ${perEvent("deleted")} deleted (this database); ${perEvent("commands")} Redis commands (whole server)`,
    );
  } finally {
    await sql.end();
    redis.disconnect();
    api.kill("SIGTERM");
    worker.kill("SIGTERM");
    crm.close();
    await dropRedisKeys(`${env.REDIS_PREFIX}:*`);
  }
}

await main();
