// `npm run bench`: Leadgate's ingest path against the naive peer of ../shared/bench and against the
// machine's ceiling (bare Fastify parsing the same bodies, bench/ceiling.mjs), side by side.
// Alternates the peer, Leadgate, the floor and the ceiling in short slices, nine rounds (load.mjs:
// Static Forms deliveries, each submission sent twice, 32 connections, 4 s each; every other round
// in reverse order, so Leadgate's slice always lies next to the peer's and the floor's) and prints
// each run, the medians, the ratios (the median of the rounds' own ratios: the machine's speed moves
// by up to 2× within a run, over tens of seconds, so neighbouring slices compare) and the CPU per accepted request of the
// server process, its Postgres backends and Redis (from /proc). Then one more Leadgate run under
// `--cpu-prof` gives the API's CPU per phase.
// Throughput counts 2xx answers only; a target that answers anything else (a 4xx or 5xx, a socket
// error, a timeout) fails the run: it exits 1 naming the target and what it answered.
// Needs `npm run build` (done by `npm run bench`), local Postgres and Redis.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import pg from "pg";
import { phasesOf } from "./phases.mjs";
import {
  BENCH_APPLICATION,
  LOOPBACK_CRM_ENV,
  cpuMeter,
  createConnection,
  dropRedisKeys,
  freshDatabase,
  migratedDatabase,
  start,
} from "./processes.mjs";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 9);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
const PROFILE = process.env.BENCH_PROFILE !== "false";
const ENCRYPTION_KEY = Buffer.alloc(32, 9).toString("base64");

/** A target answered something but 2xx: the run's figures would not be its throughput. */
class NotAccepted extends Error {}

const accepted = (result) =>
  Object.entries(result.statuses)
    .filter(([status]) => status >= 200 && status < 300)
    .reduce((sum, [, n]) => sum + n, 0);

/**
 * One slice of bench/load.mjs against `url` (`name` in messages): its figures, `rps` counting the 2xx
 * answers only. Throws NotAccepted when any answer was not 2xx, or a request failed or timed out.
 */
function load(name, url, authorization, seconds = SECONDS) {
  const args = ["bench/load.mjs", url, String(seconds), String(CONNECTIONS)];
  if (authorization) args.push(authorization);
  const result = JSON.parse(
    execFileSync(process.execPath, args, { encoding: "utf8" }).trim().split("\n").pop(),
  );
  const others = Object.fromEntries(
    Object.entries(result.statuses).filter(([status]) => status < 200 || status >= 300),
  );
  if (Object.keys(others).length > 0 || result.errors > 0 || result.timeouts > 0) {
    throw new NotAccepted(
      `${name} (${url}) answered ${accepted(result)} requests 2xx but also ${JSON.stringify(others)} (status: count), ${result.errors} errors, ${result.timeouts} timeouts`,
    );
  }
  return { ...result, rps: accepted(result) / result.seconds };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const round3 = (ms) => Number(ms.toFixed(3));

/** Monotonic µs, the clock of V8's CPU profiles. */
const nowMicros = () => Number(process.hrtime.bigint() / 1000n);

/**
 * One more Leadgate API under `--cpu-prof`, the same load once: the API's CPU per phase (ms per
 * accepted request), from the samples taken while the load ran (boot and warm-up left out).
 */
async function profiledRun(env, connection) {
  const dir = mkdtempSync(join(tmpdir(), "leadgate-bench-prof-"));
  const api = await start("dist/main.js", { ...env, PORT: "3101" }, /api listening/, 30_000, [
    "--cpu-prof",
    `--cpu-prof-dir=${dir}`,
  ]);
  const url = `http://127.0.0.1:3101/webhooks/staticforms/${connection.id}`;
  const exited = new Promise((resolve) => api.once("exit", resolve));
  let from, to, result;
  try {
    load("leadgate (profiled)", url, `Bearer ${connection.bearerToken}`, 3);
    from = nowMicros();
    result = load("leadgate (profiled)", url, `Bearer ${connection.bearerToken}`);
    to = nowMicros();
  } finally {
    api.kill("SIGTERM");
    await exited;
  }
  const file = readdirSync(dir).find((name) => name.endsWith(".cpuprofile"));
  const phases = phasesOf(join(dir, file), from, to);
  const n = accepted(result);
  return {
    rps: Math.round(result.rps),
    phases: Object.fromEntries(
      Object.entries(phases)
        .sort(([, a], [, b]) => b - a)
        .map(([phase, ms]) => [phase, round3(ms / n)]),
    ),
  };
}

async function main() {
  const leadgateDb = await migratedDatabase("leadgate_bench");
  const peerDb = await freshDatabase("leadgate_bench_peer");
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
  const ceiling = await start("bench/ceiling.mjs", { PORT: "8788" }, /ceiling listening/);
  const floor = await start(
    "bench/floor.mjs",
    {
      DATABASE_URL: leadgateDb,
      FLOOR_TENANT: connection.tenantId,
      FLOOR_CONNECTION: connection.id,
      PORT: "8789",
    },
    /floor listening/,
  );
  const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  const pool = (url) => new pg.Pool({ connectionString: url, max: 1, application_name: BENCH_APPLICATION });
  const pools = { leadgate: pool(leadgateDb), peer: pool(peerDb) };
  const targets = {
    // In this order, and reversed every other round: Leadgate's slice lies next to the peer's and the floor's.
    peer: { child: peer, sql: pools.peer, url: "http://127.0.0.1:8787/webhooks/staticforms/x" },
    leadgate: {
      child: leadgate,
      sql: pools.leadgate,
      url: `http://127.0.0.1:3100/webhooks/staticforms/${connection.id}`,
      auth: `Bearer ${connection.bearerToken}`,
    },
    // Leadgate's receipt writer behind bare Fastify, on Leadgate's database (bench/floor.mjs).
    floor: { child: floor, sql: pools.leadgate, url: "http://127.0.0.1:8789/webhooks/staticforms/x" },
    // No database: its "Postgres" column counts the (idle) backends of the peer's.
    ceiling: { child: ceiling, sql: pools.peer, url: "http://127.0.0.1:8788/webhooks/staticforms/x" },
  };
  try {
    // Warm every server up (JIT, pools) before measuring.
    for (const [name, { url, auth }] of Object.entries(targets)) load(`${name} (warm-up)`, url, auth, 3);
    const results = Object.fromEntries(Object.keys(targets).map((name) => [name, []]));
    const order = Object.keys(targets);
    for (let round = 0; round < ROUNDS; round++) {
      for (const name of round % 2 === 0 ? order : [...order].reverse()) {
        const { child, sql, url, auth } = targets[name];
        const cpu = await cpuMeter(sql, redis, { server: child });
        const result = load(name, url, auth);
        const cpuMs = await cpu(accepted(result));
        results[name].push({ ...result, cpuMs });
        console.log(
          JSON.stringify({
            round: round + 1,
            target: name,
            rps: Math.round(result.rps),
            p50: result.p50,
            p99: result.p99,
            statuses: result.statuses,
            errors: result.errors,
            cpuMsPerAccepted: cpuMs,
          }),
        );
      }
    }
    const summary = (name) => {
      const runs = results[name];
      const cpu = (key) => median(runs.map((run) => run.cpuMs[key]));
      return {
        rps: median(runs.map((r) => r.rps)),
        p50: median(runs.map((r) => r.p50)),
        p99: median(runs.map((r) => r.p99)),
        cpu: { server: cpu("server"), postgres: cpu("postgres"), redis: cpu("redis") },
      };
    };
    const rows = Object.fromEntries(Object.keys(targets).map((name) => [name, summary(name)]));
    // Each ratio is the median of the rounds' own ratios, with their range.
    const ratio = (x, y) => {
      const each = results[x].map((run, i) => run.rps / results[y][i].rps);
      return { median: median(each), min: Math.min(...each), max: Math.max(...each) };
    };
    const times = ({ median: m, min, max }) =>
      `${m.toFixed(2)}x (rounds ${min.toFixed(2)}–${max.toFixed(2)})`;
    const percent = ({ median: m, min, max }) =>
      `${(100 * m).toFixed(0)} % (rounds ${(100 * min).toFixed(0)}–${(100 * max).toFixed(0)})`;
    const { leadgate: a, peer: b } = rows;
    console.log(
      `\ningest (Static Forms, each submission twice, ${CONNECTIONS} connections, ${SECONDS} s x ${ROUNDS}, medians)`,
    );
    console.log("  target     req/s   p50 ms  p99 ms   CPU ms per accepted request: server  postgres  redis");
    for (const [name, row] of Object.entries(rows)) {
      console.log(
        `  ${name.padEnd(9)} ${String(Math.round(row.rps)).padStart(6)}  ${String(row.p50).padStart(6)}  ${String(row.p99).padStart(6)}   ${" ".repeat(29)}${row.cpu.server.toFixed(3).padStart(6)}  ${row.cpu.postgres.toFixed(3).padStart(8)}  ${row.cpu.redis.toFixed(3).padStart(5)}`,
      );
    }
    console.log(
      `  ratio:    ${times(ratio("leadgate", "peer"))} the peer's requests/s (p99 ${(a.p99 / b.p99).toFixed(2)}x), ${percent(ratio("leadgate", "ceiling"))} of the ceiling`,
    );
    console.log(
      `  floor:    ${times(ratio("floor", "peer"))} the peer's requests/s, ${percent(ratio("floor", "ceiling"))} of the ceiling (Leadgate's receipt writer behind bare Fastify: Leadgate is at ${percent(ratio("leadgate", "floor"))} of it)`,
    );
    if (PROFILE) {
      const profiled = await profiledRun(env, connection);
      console.log(
        `\nLeadgate API CPU per phase (ms per accepted request, one run under --cpu-prof: ${profiled.rps} req/s)`,
      );
      for (const [phase, ms] of Object.entries(profiled.phases)) {
        console.log(`  ${phase.padEnd(48)} ${ms.toFixed(3).padStart(6)}`);
      }
      console.log(JSON.stringify({ phases: profiled.phases }));
    }
  } finally {
    leadgate.kill("SIGTERM");
    peer.kill("SIGTERM");
    ceiling.kill("SIGTERM");
    floor.kill("SIGTERM");
    redis.disconnect();
    await Promise.all(Object.values(pools).map((p) => p.end()));
    await dropRedisKeys(`${env.REDIS_PREFIX}:*`);
    await dropRedisKeys("bull:bench-peer:*");
  }
}

try {
  await main();
} catch (error) {
  if (!(error instanceof NotAccepted)) throw error;
  console.error(`\nbench/run.mjs: not counted, the run fails: ${error.message}`);
  process.exitCode = 1;
}
