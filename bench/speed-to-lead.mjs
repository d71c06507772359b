// The speed-to-lead report's time at 1 M leads (api.md "First replies", GET /admin/speed-to-lead):
// 10 tenants with 5 connections each (4 Thumbtack, 1 Static Forms; some with their own target),
// created through the admin API, then BENCH_STL_LEADS leads (default 1,000,000) written with
// generate_series over the last 365 days (80% answered, 60% of those automatically), VACUUM
// ANALYZE, and the route timed over HTTP: one tenant's last 30 days (an operator's `?tenantId`,
// what a tenant-admin's key runs), wall and business clock, with and without bucket=day, and the
// operator's view of every tenant. Median of BENCH_STL_RUNS runs (default 7) after a warm-up.
// Prints figures, asserts nothing. Needs `npm run build`. BENCH_STL_KEEP=1 keeps the database.
import pg from "pg";
import { adminClient, freePort, dropDatabase, dropRedisKeys, start, migratedDatabase } from "./processes.mjs";

const LEADS = Number(process.env.BENCH_STL_LEADS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_STL_RUNS ?? 7);
const TENANTS = 10;
const PER_TENANT = 5;
const ENCRYPTION_KEY = Buffer.alloc(32, 9).toString("base64");
const OPERATOR_KEY = "bench-operator-key-0123456789abcdef";

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main() {
  const name = `leadgate_bench_stl_${process.pid}`;
  const databaseUrl = await migratedDatabase(name);
  const port = await freePort();
  const env = {
    DATABASE_URL: databaseUrl,
    LEADGATE_ENCRYPTION_KEY: ENCRYPTION_KEY,
    LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
    REDIS_PREFIX: `lg-bench-stl-${process.pid}`,
    PORT: String(port),
  };
  const api = await start("dist/main.js", env, /api listening/);
  const sql = new pg.Client({ connectionString: databaseUrl });
  await sql.connect();
  const admin = adminClient(port, OPERATOR_KEY);
  try {
    const tenants = [];
    for (let t = 0; t < TENANTS; t++) {
      const { tenant } = await admin("POST", "/admin/tenants", { name: `bench-${t}` });
      tenants.push(tenant.id);
      for (let c = 0; c < PER_TENANT; c++) {
        const staticForms = c === PER_TENANT - 1;
        await admin("POST", "/admin/connections", {
          tenantId: tenant.id,
          provider: staticForms ? "staticforms" : "thumbtack",
          externalAccountId: staticForms ? `form-${t}-${c}` : `7${String(t * 100 + c).padStart(17, "0")}`,
          displayName: `bench ${t}/${c}`,
          inboundAuth: { type: staticForms ? "bearer" : "basic" },
          ...(c === 0 ? { settings: { responseTarget: { seconds: 120 } } } : {}),
        });
      }
    }
    const started = Date.now();
    // Lead i goes to connection i mod 50, at a time spread over the last 365 days; its first
    // response (80% of each connection's leads, 60% of those automatic: k, the lead's rank within
    // its connection, decides) took up to about an hour, business seconds up to that.
    await sql.query(
      `WITH c AS (SELECT row_number() OVER (ORDER BY id) - 1 AS n, id, tenant_id, provider FROM connections)
       INSERT INTO leads (tenant_id, connection_id, provider, external_lead_id, last_event_at, created_at,
                          received_at, provider_created_at, first_response_at, first_response_by,
                          first_response_seconds, first_response_business_seconds)
       SELECT c.tenant_id, c.id, c.provider, 'lead-' || g, l.at, l.at, l.at, l.at,
              CASE WHEN l.answered THEN l.at + make_interval(secs => l.seconds) END,
              CASE WHEN l.answered THEN CASE WHEN l.k % 5 < 3 THEN 'auto' ELSE 'business' END END,
              CASE WHEN l.answered THEN l.seconds END,
              CASE WHEN l.answered THEN l.seconds * (l.k % 7) / 6.0 END
       FROM generate_series(0, $1::int - 1) g
       JOIN c ON c.n = g % $2::int
       CROSS JOIN LATERAL (SELECT now() - (g::float8 / $1) * interval '365 days' AS at,
                                  (g / $2::int) % 10 < 8 AS answered,
                                  g / $2::int AS k,
                                  (g::bigint * 7919 % 3600 + 1)::float8 AS seconds) l`,
      [LEADS, TENANTS * PER_TENANT],
    );
    await sql.query("VACUUM ANALYZE");
    console.log(
      `\nspeed to lead (${LEADS} leads, ${TENANTS * PER_TENANT} connections, ${TENANTS} tenants; written and analyzed in ${((Date.now() - started) / 1000).toFixed(1)} s)`,
    );
    const tenant = tenants[0];
    const cases = [
      ["one tenant, wall", `tenantId=${tenant}`],
      ["one tenant, business", `tenantId=${tenant}&clock=business`],
      ["one tenant, wall, bucket=day", `tenantId=${tenant}&bucket=day`],
      ["one tenant, business, bucket=day", `tenantId=${tenant}&clock=business&bucket=day`],
      ["every tenant (operator), wall", ""],
      ["every tenant (operator), wall, bucket=day", "bucket=day"],
    ];
    for (const [label, query] of cases) {
      const times = [];
      let body;
      for (let run = 0; run <= RUNS; run++) {
        const t0 = process.hrtime.bigint();
        body = await admin("GET", `/admin/speed-to-lead?${query}`);
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (run > 0) times.push(ms); // the first is the warm-up
      }
      console.log(
        `  ${label}: median ${median(times).toFixed(1)} ms (min ${Math.min(...times).toFixed(1)}, max ${Math.max(...times).toFixed(1)}), ${body.overall.leads} leads counted`,
      );
    }
  } finally {
    api.kill("SIGTERM");
    await sql.end();
    await dropRedisKeys(`${env.REDIS_PREFIX}:*`);
    if (process.env.BENCH_STL_KEEP === "1") console.log(`  kept ${databaseUrl}`);
    else await dropDatabase(databaseUrl);
  }
}

await main();
