// Lead search at 300 k leads (GET /admin/leads?q=, hardening L5), before and after its trigram
// index and the per-tenant share of the admin pool (ADMIN_READS_PER_TENANT). 10 tenants made
// through the admin API, one Static Forms connection each; BENCH_SEARCH_LEADS leads (default
// 300,000; half of them the first tenant's) written with generate_series (names from 30 first and
// 60 last names, e-mails, E.164 phones, numeric provider ids), VACUUM ANALYZE. Then two phases on
// the same data, each with an API of its own:
// - before: leads_search_trgm_idx dropped, ADMIN_READS_PER_TENANT=100 (no share: as before);
// - after: the index built again (CREATE INDEX CONCURRENTLY, as its migration does), the default (2).
// Each phase prints, for the big tenant's key and each term: the median of BENCH_SEARCH_RUNS
// searches over HTTP (default 7, after a warm-up), and the plan of the SQL Prisma sends (EXPLAIN
// ANALYZE: the indexes it scans, its median time in Postgres). Then the contention of the
// incident: the big tenant runs 4 searches at once, again and again, that no index helps (a
// 2-character term: no trigram), while a small tenant lists its leads (no q) one request after
// another: that list's median and worst time, and what the big tenant's searches were answered.
// Prints figures, asserts nothing. Needs `npm run build`. BENCH_SEARCH_KEEP=1 keeps the database.
import pg from "pg";
import {
  adminClient,
  dropDatabase,
  dropRedisKeys,
  freePort,
  migratedDatabase,
  start,
  stop,
} from "./processes.mjs";

const LEADS = Number(process.env.BENCH_SEARCH_LEADS ?? 300_000);
const RUNS = Number(process.env.BENCH_SEARCH_RUNS ?? 7);
/** The small tenant's list requests during the contention (one after another). */
const CONTENDED = Number(process.env.BENCH_SEARCH_CONTENDED ?? 20);
const TENANTS = 10;
const ENCRYPTION_KEY = Buffer.alloc(32, 9).toString("base64");
const OPERATOR_KEY = "bench-operator-key-0123456789abcdef";
const INDEX = "leads_search_trgm_idx";
const INDEX_SQL = `CREATE INDEX CONCURRENTLY IF NOT EXISTS "${INDEX}" ON "leads" USING gin ("name" gin_trgm_ops, "email" gin_trgm_ops, "phone" gin_trgm_ops, "external_lead_id" gin_trgm_ops)`;

const FIRST =
  "James Mary John Patricia Robert Jennifer Michael Linda William Elizabeth David Barbara Richard Susan Joseph Jessica Thomas Sarah Charles Karen Marta Ann Luis Chen Aisha Olga Pedro Fatima Hiro Ingrid";
const LAST =
  "Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez Lopez Gonzalez Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson White Harris Sanchez Clark Ramirez Lewis Robinson Walker Young Allen King Wright Scott Torres Nguyen Hill Flores Green Adams Nelson Baker Hall Rivera Campbell Mitchell Carter Roberts Kowalski Okafor Yamamoto Petrov Haddad Lindqvist Moreau Novak Rossi Schmidt";

/** The terms searched: what a person types into the console's search. */
const TERMS = [
  ["full name (about 80 of the tenant's leads)", "Marta Kowalski"],
  ["last name fragment (about 2,500)", "kowal"],
  ["one e-mail address", "marta.kowalski42@"],
  ["phone digits (one lead)", "2610570070"],
  ["provider id (one lead)", "400000791900"],
  ["no match", "zzqx"],
  ["2 characters, no match (no trigram)", "zq"],
];

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;

/** The statement Prisma sends for GET /admin/leads?q= of one tenant (src/leads/lead-reads.ts). */
const SEARCH_SQL = `SELECT "public"."leads"."id" FROM "public"."leads"
  WHERE ("public"."leads"."tenant_id" = $1 AND ("public"."leads"."name" ILIKE $2 OR "public"."leads"."email" ILIKE $3
    OR "public"."leads"."phone" ILIKE $4 OR "public"."leads"."external_lead_id" ILIKE $5))
  ORDER BY "public"."leads"."created_at" DESC, "public"."leads"."id" DESC LIMIT $6 OFFSET $7`;

/**
 * The plan Postgres picks for a term (EXPLAIN ANALYZE of that SQL, 3 times): the indexes it scans
 * (or Seq Scan) and the median execution time in the server, without HTTP, Prisma or Node.
 */
async function plan(sql, tenantId, term) {
  const like = `%${term}%`;
  const times = [];
  let lines = [];
  for (let run = 0; run < 3; run++) {
    const { rows } = await sql.query(`EXPLAIN (ANALYZE, COSTS OFF) ${SEARCH_SQL}`, [
      tenantId,
      like,
      like,
      like,
      like,
      51,
      0,
    ]);
    lines = rows.map((row) => row["QUERY PLAN"]);
    times.push(Number(/Execution Time: ([\d.]+) ms/.exec(lines.at(-1))[1]));
  }
  const indexes = [
    ...new Set(
      lines.flatMap(
        (line) => /(?:Index Scan(?: Backward)? using|Bitmap Index Scan on) (\S+)/.exec(line)?.[1] ?? [],
      ),
    ),
  ];
  const seq = lines.some((line) => /Seq Scan on leads/.test(line));
  return `${median(times).toFixed(2)} ms in Postgres, ${[...indexes, ...(seq ? ["Seq Scan"] : [])].join(" + ")}`;
}

async function phase(label, { sql, env, big, small }) {
  const port = await freePort();
  const api = await start("dist/main.js", { ...env, PORT: String(port) }, /api listening/);
  const get = async (key, path) => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    await response.arrayBuffer();
    return response.status;
  };
  try {
    console.log(`\n  ${label}`);
    for (const [name, term] of TERMS) {
      const times = [];
      for (let run = 0; run <= RUNS; run++) {
        const t0 = process.hrtime.bigint();
        const status = await get(big.key, `/admin/leads?q=${encodeURIComponent(term)}`);
        if (status !== 200) throw new Error(`search answered ${status}`);
        if (run > 0) times.push(ms(t0)); // the first is the warm-up
      }
      console.log(
        `    ${name.padEnd(40)} ${median(times).toFixed(1).padStart(7)} ms median over HTTP (max ${Math.max(...times).toFixed(1)}); ${await plan(sql, big.tenantId, term)}`,
      );
    }
    // The incident: the big tenant's 4 searches at once, again and again, while a small tenant lists.
    let contending = true;
    const answered = {};
    const loops = Array.from({ length: 4 }, async () => {
      while (contending) {
        const status = await get(big.key, "/admin/leads?q=zq");
        answered[status] = (answered[status] ?? 0) + 1;
      }
    });
    const times = [];
    for (let i = 0; i < CONTENDED; i++) {
      const t0 = process.hrtime.bigint();
      const status = await get(small.key, "/admin/leads");
      if (status !== 200) throw new Error(`the small tenant's list answered ${status}`);
      times.push(ms(t0));
    }
    contending = false;
    await Promise.all(loops);
    console.log(
      `    another tenant's list while 4 searches run at once: ${median(times).toFixed(1)} ms median, max ${Math.max(...times).toFixed(1)} ms (${CONTENDED} requests); the searches were answered ${JSON.stringify(answered)}`,
    );
  } finally {
    await stop(api);
  }
}

async function main() {
  const name = `leadgate_bench_search_${process.pid}`;
  const databaseUrl = await migratedDatabase(name);
  const env = {
    DATABASE_URL: databaseUrl,
    LEADGATE_ENCRYPTION_KEY: ENCRYPTION_KEY,
    LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
    REDIS_PREFIX: `lg-bench-search-${process.pid}`,
  };
  const sql = new pg.Client({ connectionString: databaseUrl });
  await sql.connect();
  const port = await freePort();
  const api = await start("dist/main.js", { ...env, PORT: String(port) }, /api listening/);
  const admin = adminClient(port, OPERATOR_KEY);
  try {
    const tenants = [];
    for (let t = 0; t < TENANTS; t++) {
      const { tenant, apiKey } = await admin("POST", "/admin/tenants", { name: `bench-search-${t}` });
      const { connection } = await admin("POST", "/admin/connections", {
        tenantId: tenant.id,
        provider: "staticforms",
        externalAccountId: `search-form-${t}`,
        displayName: `bench ${t}`,
        inboundAuth: { type: "bearer" },
      });
      tenants.push({ tenantId: tenant.id, key: apiKey.key, connectionId: connection.id });
    }
    await stop(api);
    const started = Date.now();
    // Lead g: the first tenant's when g is even (half of them), else one of the other nine's.
    await sql.query(
      `WITH c AS (SELECT u.n - 1 AS n, c.id, c.tenant_id
                  FROM unnest($4::uuid[]) WITH ORDINALITY AS u(id, n) JOIN connections c ON c.id = u.id)
       INSERT INTO leads (tenant_id, connection_id, provider, external_lead_id, name, email, phone, last_event_at, created_at)
       SELECT c.tenant_id, c.id, 'staticforms', (400000000000 + g::bigint * 7919)::text,
              f.first || ' ' || l.last,
              lower(f.first) || '.' || lower(l.last) || (g % 997) || '@' ||
                (ARRAY['gmail.com','yahoo.com','outlook.com','example.org','hotmail.com'])[1 + (g / 10) % 5],
              '+1' || (2000000000 + (g::bigint * 104729) % 7999999999)::text,
              now() - (g::float8 / $1) * interval '365 days', now() - (g::float8 / $1) * interval '365 days'
       FROM generate_series(0, $1::int - 1) g
       JOIN c ON c.n = CASE WHEN g % 2 = 0 THEN 0 ELSE 1 + (g / 2) % 9 END
       CROSS JOIN LATERAL (SELECT (string_to_array($2, ' '))[1 + (g::bigint * 31) % 30] AS first) f
       CROSS JOIN LATERAL (SELECT (string_to_array($3, ' '))[1 + (g::bigint * 17 / 30) % 60] AS last) l`,
      [LEADS, FIRST, LAST, tenants.map((tenant) => tenant.connectionId)],
    );
    await sql.query("VACUUM ANALYZE leads");
    const size = await sql.query(
      `SELECT pg_size_pretty(pg_relation_size('leads')) AS leads, pg_size_pretty(pg_relation_size('${INDEX}')) AS index`,
    );
    console.log(
      `\nlead search (${LEADS} leads, ${TENANTS} tenants, the first with half of them; written and analyzed in ${((Date.now() - started) / 1000).toFixed(1)} s; table ${size.rows[0].leads}, ${INDEX} ${size.rows[0].index})`,
    );
    const [big, small] = [tenants[0], tenants[1]];
    await sql.query(`DROP INDEX ${INDEX}`);
    await phase("before: no trigram index, no per-tenant share", {
      sql,
      env: { ...env, ADMIN_READS_PER_TENANT: "100" },
      big,
      small,
    });
    const built = Date.now();
    await sql.query(INDEX_SQL);
    await sql.query("ANALYZE leads");
    console.log(`\n  ${INDEX} built CONCURRENTLY in ${((Date.now() - built) / 1000).toFixed(1)} s`);
    await phase("after: trigram index, ADMIN_READS_PER_TENANT=2 (the default)", {
      sql,
      env,
      big,
      small,
    });
  } finally {
    await stop(api);
    await sql.end();
    await dropRedisKeys(`${env.REDIS_PREFIX}:*`);
    if (process.env.BENCH_SEARCH_KEEP === "1") console.log(`  kept ${databaseUrl}`);
    else await dropDatabase(databaseUrl);
  }
}

await main();
