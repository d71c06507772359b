// `npm run bench`: Leadgate's ingest path against the naive peer of ../shared/bench, side by side.
// Alternates A B A B A B (load.mjs: Static Forms deliveries, each submission sent twice, 32
// connections, 10 s each) and prints both medians and their ratio. Prints figures, asserts nothing.
// Needs `npm run build` (done by `npm run bench`) and local Postgres and Redis.
import { execFileSync } from "node:child_process";
import { LOOPBACK_CRM_ENV, createConnection, dropRedisKeys, freshDatabase, start } from "./processes.mjs";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ENCRYPTION_KEY = Buffer.alloc(32, 9).toString("base64");

function load(url, authorization) {
  const args = ["bench/load.mjs", url, String(SECONDS), String(CONNECTIONS)];
  if (authorization) args.push(authorization);
  return JSON.parse(execFileSync(process.execPath, args, { encoding: "utf8" }).trim().split("\n").pop());
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

async function main() {
  const leadgateDb = await freshDatabase("leadgate_bench");
  const peerDb = await freshDatabase("leadgate_bench_peer");
  execFileSync(process.execPath, ["scripts/migrate.mjs"], {
    env: { ...process.env, DATABASE_URL: leadgateDb },
    stdio: "ignore",
  });
  const env = {
    DATABASE_URL: leadgateDb,
    LEADGATE_ENCRYPTION_KEY: ENCRYPTION_KEY,
    REDIS_PREFIX: `lg-bench-${process.pid}`,
    PORT: "3100",
    // The load sends far more per connection than a provider would; the limit's cost is measured, not its refusals.
    WEBHOOK_RATE_LIMIT: process.env.BENCH_RATE_LIMIT ?? "10000000",
    ...LOOPBACK_CRM_ENV,
  };
  const connection = createConnection(env);
  const leadgate = await start("dist/main.js", env, /api listening/);
  const peer = await start("bench/peer.mjs", { DATABASE_URL: peerDb, PORT: "8787" }, /peer listening/);
  const targets = {
    leadgate: [
      `http://127.0.0.1:3100/webhooks/staticforms/${connection.id}`,
      `Bearer ${connection.bearerToken}`,
    ],
    peer: ["http://127.0.0.1:8787/webhooks/staticforms/x"],
  };
  try {
    // Warm both up (JIT, pools) before measuring.
    for (const [url, auth] of Object.values(targets))
      execFileSync(process.execPath, [
        "bench/load.mjs",
        url,
        "3",
        String(CONNECTIONS),
        ...(auth ? [auth] : []),
      ]);
    const results = { leadgate: [], peer: [] };
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of ["leadgate", "peer"]) {
        const result = load(...targets[name]);
        results[name].push(result);
        console.log(
          JSON.stringify({
            round: round + 1,
            target: name,
            rps: Math.round(result.rps),
            p50: result.p50,
            p99: result.p99,
            statuses: result.statuses,
            errors: result.errors,
          }),
        );
      }
    }
    const summary = (name) => ({
      rps: median(results[name].map((r) => r.rps)),
      p50: median(results[name].map((r) => r.p50)),
      p99: median(results[name].map((r) => r.p99)),
    });
    const a = summary("leadgate");
    const b = summary("peer");
    console.log(
      `\ningest (Static Forms, each submission twice, ${CONNECTIONS} connections, ${SECONDS} s x ${ROUNDS}, medians)`,
    );
    console.log(`  leadgate: ${Math.round(a.rps)} req/s  p50 ${a.p50} ms  p99 ${a.p99} ms`);
    console.log(`  peer:     ${Math.round(b.rps)} req/s  p50 ${b.p50} ms  p99 ${b.p99} ms`);
    console.log(`  ratio:    ${(a.rps / b.rps).toFixed(2)}x requests/s, p99 ${(a.p99 / b.p99).toFixed(2)}x`);
  } finally {
    leadgate.kill("SIGTERM");
    peer.kill("SIGTERM");
    await dropRedisKeys(`${env.REDIS_PREFIX}:*`);
    await dropRedisKeys("bull:bench-peer:*");
  }
}

await main();
