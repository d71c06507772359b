// The lead.unanswered sweep at scale (src/alerts/unanswered-sweep.ts): BENCH_SWEEP_LEADS overdue leads
// (default 100,000) awaiting a first response over BENCH_SWEEP_CONNECTIONS Thumbtack connections
// (default 50, in 5 tenants), half of them with business hours of 6 ranges on each day (the largest
// the API accepts; the other half on the wall clock), created through the admin API in a fresh
// database, the leads written with generate_series over the last 6 days. The sweep runs in a worker's
// application context in this process (the worker's own sweep timer set to an hour, so only these runs
// count): BENCH_SWEEP_RUNS sweeps (default 5), each timed, with this process's RSS and heap after it
// (after a GC when node runs with --expose-gc, as `npm run bench` does). Prints figures, asserts nothing.
// Run: npm run build && node --expose-gc bench/unanswered-sweep.mjs
import "reflect-metadata";
import pg from "pg";
import { NestFactory } from "@nestjs/core";
import {
  adminClient,
  dropDatabase,
  dropRedisKeys,
  freePort,
  migratedDatabase,
  start,
  stop,
} from "./processes.mjs";

const LEADS = Number(process.env.BENCH_SWEEP_LEADS ?? 100_000);
const CONNECTIONS = Number(process.env.BENCH_SWEEP_CONNECTIONS ?? 50);
const RUNS = Number(process.env.BENCH_SWEEP_RUNS ?? 5);
const TENANTS = 5;
const ENCRYPTION_KEY = Buffer.alloc(32, 7).toString("base64");
const OPERATOR_KEY = "bench-operator-key-0123456789abcdef";
const MiB = 1024 * 1024;

const range = (h) => [`${String(h).padStart(2, "0")}:00`, `${String(h).padStart(2, "0")}:50`];
const HOURS = {
  timezone: "America/New_York",
  weekly: Object.fromEntries(
    ["mon", "tue", "wed", "thu", "fri", "sat", "sun"].map((d) => [d, [0, 4, 8, 12, 16, 20].map(range)]),
  ),
};

async function main() {
  const name = `leadgate_bench_sweep_${process.pid}`;
  const databaseUrl = await migratedDatabase(name);
  const prefix = `lg-bench-sweep-${process.pid}`;
  const env = {
    DATABASE_URL: databaseUrl,
    LEADGATE_ENCRYPTION_KEY: ENCRYPTION_KEY,
    LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
    REDIS_PREFIX: prefix,
    UNANSWERED_SWEEP_SECONDS: "3600",
  };
  const port = await freePort();
  const api = await start("dist/main.js", { ...env, PORT: String(port) }, /api listening/);
  const sql = new pg.Client({ connectionString: databaseUrl });
  await sql.connect();
  const post = adminClient(port, OPERATOR_KEY);
  const admin = (path, body) => post("POST", path, body);
  let worker;
  try {
    for (let t = 0; t < TENANTS; t++) {
      const { tenant } = await admin("/admin/tenants", { name: `bench-sweep-${t}` });
      for (let c = t; c < CONNECTIONS; c += TENANTS) {
        await admin("/admin/connections", {
          tenantId: tenant.id,
          provider: "thumbtack",
          externalAccountId: `7${String(c).padStart(17, "0")}`,
          displayName: `bench ${c}`,
          inboundAuth: { type: "basic" },
          settings: c % 2 === 0 ? { businessHours: HOURS } : {},
        });
      }
    }
    await stop(api);
    await sql.query(
      `INSERT INTO leads (tenant_id, connection_id, provider, external_lead_id, last_event_at, received_at,
                          provider_created_at, awaits_response)
       SELECT c.tenant_id, c.id, 'thumbtack', 'lead-' || n, t, t, t, true
       FROM (SELECT id, tenant_id, row_number() OVER (ORDER BY id) - 1 AS i FROM connections) c
       JOIN generate_series(0, $1::int - 1) AS n ON n % $2::int = c.i
       CROSS JOIN LATERAL (SELECT now() - interval '1 hour' - (n % 5000) * interval '100 seconds' AS t) AS at`,
      [LEADS, CONNECTIONS],
    );
    await sql.query("VACUUM ANALYZE leads");

    process.env = { ...process.env, ...env };
    const { appConfig } = await import("../dist/app-config.js");
    const { WorkerModule } = await import("../dist/worker.module.js");
    const { UnansweredSweep } = await import("../dist/alerts/unanswered-sweep.js");
    worker = await NestFactory.createApplicationContext(WorkerModule.forRoot(appConfig()), {
      logger: false,
    });
    await worker.init();
    const sweep = worker.get(UnansweredSweep);
    const memory = () => {
      globalThis.gc?.();
      const { rss, heapUsed } = process.memoryUsage();
      return { rss: rss / MiB, heap: heapUsed / MiB };
    };
    const before = memory();
    console.log(
      `lead.unanswered sweep: ${LEADS.toLocaleString("en-US")} overdue leads over ${CONNECTIONS} connections (half with 6 ranges a day)`,
    );
    console.log(
      `before: RSS ${before.rss.toFixed(1)} MiB, heap ${before.heap.toFixed(1)} MiB${globalThis.gc ? "" : " (no --expose-gc)"}`,
    );
    const times = [];
    for (let run = 1; run <= RUNS; run++) {
      const started = process.hrtime.bigint();
      const { unanswered } = await sweep.run(new Date());
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      times.push(ms);
      const after = memory();
      const leads = [...unanswered.values()].reduce((a, b) => a + b, 0);
      console.log(
        `sweep ${run}: ${ms.toFixed(0)} ms, ${unanswered.size} connections, ${leads} leads past target; RSS ${after.rss.toFixed(1)} MiB (${(after.rss - before.rss).toFixed(1)} since before), heap ${after.heap.toFixed(1)} MiB`,
      );
    }
    times.sort((a, b) => a - b);
    console.log(`median sweep ${times[Math.floor(times.length / 2)].toFixed(0)} ms`);
  } finally {
    await worker?.close();
    await sql.end();
    await dropDatabase(databaseUrl);
    await dropRedisKeys(`${prefix}*`);
  }
}

await main();
