// Reconciliation at scale: 2,000 Yelp connections (BENCH_YELP_CONNECTIONS) against a fake Yelp on
// loopback that lists each business's leads (a few of them missed by webhooks) and records when
// each call arrived. Prints how the runs spread over one interval, the most calls/s the fake saw
// per endpoint against the provider limit, and the ingest rate (Static Forms load, load.mjs) without
// and while reconciliation runs. Prints figures, asserts nothing.
// Needs `npm run build` (done by `npm run bench`) and local Postgres and Redis.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import pg from "pg";
import { createServer } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { LOOPBACK_CRM_ENV, dropRedisKeys, start, migratedDatabase } from "./processes.mjs";

const CONNECTIONS = Number(process.env.BENCH_YELP_CONNECTIONS ?? 2000);
const INTERVAL = Number(process.env.BENCH_RECONCILE_INTERVAL ?? 120);
const LIMIT = Number(process.env.BENCH_YELP_LIMIT ?? 30);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const LOAD_CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
/** One business in this many has a lead its webhook never delivered. */
const MISSED_EVERY = 50;
const ENCRYPTION_KEY = Buffer.alloc(32, 9).toString("base64");
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/** The fake Yelp: 3 leads per business, listed newest first; calls recorded per endpoint. */
function fakeYelp() {
  const calls = []; // { at, endpoint, business }
  const time = new Date(Date.now() - 30 * 60_000).toISOString();
  const server = createServer((request, response) => {
    const url = new URL(request.url, "http://fake");
    const reply = (status, body) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    request.resume();
    const list = /^\/v3\/businesses\/([^/]+)\/lead_ids$/.exec(url.pathname);
    if (list) {
      const business = list[1];
      calls.push({ at: Date.now(), endpoint: "lead_ids", business });
      const n = Number(business.replace(/\D/g, ""));
      const ids = [`${business}_L1`, `${business}_L2`, `${business}_L3`];
      if (n % MISSED_EVERY === 0) ids.unshift(`${business}_missed`);
      return reply(200, { lead_ids: ids, has_more: false });
    }
    const lead = /^\/v3\/leads\/([^/]+?)(\/events)?$/.exec(url.pathname);
    if (lead) {
      calls.push({ at: Date.now(), endpoint: lead[2] ? "events" : "lead" });
      if (request.method === "POST") return reply(201, {});
      if (!lead[2]) return reply(200, { id: lead[1], user: { display_name: "Bench" }, time_created: time });
      return reply(200, {
        events: [
          {
            id: `${lead[1]}_ev1`,
            cursor: "c1",
            event_type: "TEXT",
            user_type: "CONSUMER",
            user_display_name: "Bench",
            event_content: { text: "hello" },
            time_created: time,
          },
        ],
      });
    }
    reply(404, {});
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ server, calls, url: `http://127.0.0.1:${server.address().port}` }),
    ),
  );
}

/** The load runs in a child process, awaited (not synchronously: the fake Yelp in this process keeps answering). */
async function load(url, authorization) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["bench/load.mjs", url, String(SECONDS), String(LOAD_CONNECTIONS), authorization],
    { encoding: "utf8" },
  );
  return JSON.parse(stdout.trim().split("\n").pop());
}

/** A helper script's last JSON line, awaited (the fake Yelp in this process keeps answering meanwhile). */
async function node(script, env) {
  const { stdout } = await promisify(execFile)(process.execPath, [script], {
    env: { ...process.env, ...env },
    encoding: "utf8",
  });
  return JSON.parse(stdout.trim().split("\n").pop());
}

async function main() {
  const yelp = await fakeYelp();
  const db = await migratedDatabase("leadgate_bench_reconcile");
  const env = {
    DATABASE_URL: db,
    LEADGATE_ENCRYPTION_KEY: ENCRYPTION_KEY,
    REDIS_PREFIX: `lg-bench-reconcile-${process.pid}`,
    PORT: "3101",
    WEBHOOK_RATE_LIMIT: "10000000",
    YELP_API_BASE_URL: yelp.url,
    PROVIDER_RATE_LIMITS: `yelp=${LIMIT}/s`,
    RECONCILE_INTERVAL_SECONDS: String(INTERVAL),
    ...LOOPBACK_CRM_ENV,
  };
  const forms = await node("bench/create-connection.mjs", env);
  const api = await start("dist/main.js", env, /api listening/);
  const worker = await start("dist/worker.js", env, /worker started/);
  const target = [`http://127.0.0.1:3101/webhooks/staticforms/${forms.id}`, `Bearer ${forms.bearerToken}`];
  try {
    await load(...target); // warm-up
    const without = [];
    for (let round = 0; round < ROUNDS; round++) without.push((await load(...target)).rps);

    const created = Date.now();
    await node("bench/create-yelp-connections.mjs", { ...env, BENCH_YELP_CONNECTIONS: String(CONNECTIONS) });
    console.log(`created ${CONNECTIONS} Yelp connections in ${((Date.now() - created) / 1000).toFixed(1)} s`);
    // The worker's sweep first notes each connection's tick; its runs then come over the next interval.
    const intervalStart = Date.now();
    const during = [];
    for (let round = 0; round < ROUNDS; round++) during.push((await load(...target)).rps);
    const rest = intervalStart + INTERVAL * 1000 + 5_000 - Date.now();
    if (rest > 0) await sleep(rest);

    const lists = yelp.calls.filter(
      (call) =>
        call.endpoint === "lead_ids" && call.at >= intervalStart && call.at < intervalStart + INTERVAL * 1000,
    );
    const first = Math.min(...lists.map((call) => call.at));
    const last = Math.max(...lists.map((call) => call.at));
    const distinct = new Set(lists.map((call) => call.business)).size;
    const buckets = Array.from({ length: 10 }, () => 0);
    for (const call of lists)
      buckets[Math.min(9, Math.floor(((call.at - intervalStart) / (INTERVAL * 1000)) * 10))]++;
    const maxPerSecond = (endpoint) => {
      const times = yelp.calls
        .filter((call) => call.endpoint === endpoint)
        .map((call) => call.at)
        .sort((a, b) => a - b);
      let max = 0;
      for (let i = 0, j = 0; i < times.length; i++) {
        while (times[i] - times[j] >= 1000) j++;
        max = Math.max(max, i - j + 1);
      }
      return max;
    };
    const a = median(without);
    const b = median(during);
    console.log(
      `\nreconciliation of ${CONNECTIONS} Yelp connections, RECONCILE_INTERVAL_SECONDS=${INTERVAL}, yelp=${LIMIT}/s`,
    );
    console.log(`  lead-id lists in the interval: ${lists.length} (${distinct} distinct businesses)`);
    const sql = new pg.Client({ connectionString: db });
    await sql.connect();
    const { rows: stored } = await sql.query(
      "SELECT source, count(*)::int AS n FROM receipts GROUP BY source",
    );
    await sql.end();
    console.log(`  receipts by source: ${stored.map((row) => `${row.source} ${row.n}`).join(", ")}`);
    console.log(
      `  spread: first ${((first - intervalStart) / 1000).toFixed(1)} s, last ${((last - intervalStart) / 1000).toFixed(1)} s after the interval began`,
    );
    console.log(`  per tenth of the interval: ${buckets.join(" ")}`);
    console.log(
      `  max calls/s seen by the fake: lead_ids ${maxPerSecond("lead_ids")}, events ${maxPerSecond("events")}, lead ${maxPerSecond("lead")} (limit ${LIMIT}/s per endpoint)`,
    );
    console.log(
      `  ingest (Static Forms load, ${SECONDS} s x ${ROUNDS}, medians): without ${Math.round(a)} req/s, during ${Math.round(b)} req/s, ratio ${(b / a).toFixed(2)}`,
    );
  } finally {
    api.kill("SIGTERM");
    worker.kill("SIGTERM");
    yelp.server.close();
    await dropRedisKeys(`${env.REDIS_PREFIX}:*`);
  }
}

await main();
