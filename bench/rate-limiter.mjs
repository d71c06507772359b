// The ingest rate limiter against the library (rate-limiter-flexible): is the hand-written, batched
// limiter (src/ingestion/rate-limiter.ts, `RateLimiter.check`, which reserves leases of deliveries
// per connection and shares one pipelined Redis round trip between concurrent reservations) cheaper
// than `RateLimiterRedis.consume` (one Lua script call per delivery) for the same job: a fixed window
// of a limit per connection per 60 s, counted in the local Redis (127.0.0.1:6379)?
//
// 1. Saturated: BENCH_RL_ADMITS admits (default 60,000) over 32 connection ids from 64 concurrent
//    callers, limit 1,000,000 per 60 s (nothing is refused); A (hand-made) and B (library) alternate
//    A B A B A B (BENCH_RL_ROUNDS rounds, default 3), after an unmeasured warm-up of each. Per run:
//    admits/s (wall), this process's CPU per admit (process.cpuUsage), the Redis server's CPU per
//    admit (INFO cpu used_cpu_sys + used_cpu_user) and Redis commands per 1,000 admits (INFO stats
//    total_commands_processed; commands run inside a Lua script count too). Medians, and the ratio
//    library / hand-made. A no-op "limiter" measured the same way shows what the driver alone costs.
// 2. Paced at BENCH_RL_RATE admits/s (default 2,400: twice the peer's ingest rate on this machine)
//    for BENCH_RL_PACED_SECONDS (default 4) per run, same alternation with a no-op run: the measured
//    share of one core in this process (minus the no-op's), next to the estimate from the saturated
//    figures (CPU µs per admit × rate / 1e6).
// 3. Exactness: limit 100 per window over 32 connections, 150 attempts each: how many each limiter
//    admitted per connection (should be exactly 100) and refused (should be 50).
//
// Redis keys live under bench-rl-<pid> and are deleted at the end. The Redis server's figures are
// for the whole server, so other clients' traffic is sampled for 0.3 s just before and just after
// each run and its rate subtracted (printed as "background"; bursty traffic makes that approximate;
// BENCH_RL_REDIS_URL points the bench at another, quiet, Redis).
// Run: npm run build && node bench/rate-limiter.mjs
// Prints figures, asserts nothing.
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { RateLimiter } from "../dist/ingestion/rate-limiter.js";
import { Metrics } from "../dist/observability/metrics.js";

const ADMITS = Number(process.env.BENCH_RL_ADMITS ?? 60_000);
const ROUNDS = Number(process.env.BENCH_RL_ROUNDS ?? 3);
const RATE = Number(process.env.BENCH_RL_RATE ?? 2_400);
const PACED_SECONDS = Number(process.env.BENCH_RL_PACED_SECONDS ?? 4);
const CONNECTIONS = 32;
const CALLERS = 64;
const LIMIT = 1_000_000;
const WINDOW_SECONDS = 60;
const REDIS_URL = process.env.BENCH_RL_REDIS_URL ?? "redis://127.0.0.1:6379";
const BACKGROUND_MS = 300; // other clients' traffic is sampled this long before and after each run
const PREFIX = `bench-rl-${process.pid}`;

const ids = Array.from({ length: CONNECTIONS }, () => randomUUID());
const metrics = new Metrics();
/** The options of the project's fail-fast client (src/redis/redis.ts). */
const client = () =>
  new Redis(REDIS_URL, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    lazyConnect: true,
  });
const clients = { hand: client(), lib: client(), admin: client() };
let runs = 0;

/** A fresh limiter of `kind` (its own keys), as `admit(id) → true | false (refused)`. */
function limiter(kind, limit) {
  const prefix = `${PREFIX}:${kind}:${runs++}`;
  if (kind === "hand") {
    const rateLimiter = new RateLimiter(
      clients.hand,
      { webhookRateLimit: limit, webhookRateLimitWindowSeconds: WINDOW_SECONDS },
      { redisUrl: REDIS_URL, redisPrefix: prefix },
      metrics,
    );
    return async (id) => {
      try {
        await rateLimiter.check(id);
        return true;
      } catch (error) {
        if (error?.status === 429) return false;
        throw error;
      }
    };
  }
  if (kind === "lib") {
    // As src/auth/admin-rate-limit.ts configures it.
    const flexible = new RateLimiterRedis({
      storeClient: clients.lib,
      keyPrefix: prefix,
      points: limit,
      duration: WINDOW_SECONDS,
      rejectIfRedisNotReady: true,
      insuranceLimiter: new RateLimiterMemory({ points: limit, duration: WINDOW_SECONDS }),
    });
    return async (id) => {
      try {
        await flexible.consume(id);
        return true;
      } catch (error) {
        if (error instanceof RateLimiterRes) return false;
        throw error;
      }
    };
  }
  return async () => true; // "none": the driver alone
}

/** The Redis server's CPU seconds and commands processed so far (one INFO: itself one command). */
async function redisCounters() {
  const info = await clients.admin.info();
  const field = (name) => Number(new RegExp(`^${name}:([0-9.]+)`, "m").exec(info)[1]);
  return { cpu: field("used_cpu_sys") + field("used_cpu_user"), commands: field("total_commands_processed") };
}

/** Other clients' load on the Redis server over `BACKGROUND_MS`: CPU s/s and commands/s. */
async function background() {
  const a = await redisCounters();
  const t0 = performance.now();
  await sleep(BACKGROUND_MS);
  const b = await redisCounters();
  const seconds = (performance.now() - t0) / 1000;
  return { cpu: (b.cpu - a.cpu) / seconds, commands: (b.commands - a.commands - 1) / seconds };
}

/**
 * Runs `load` and measures it; `admits` is how many it made. The Redis figures are net of the
 * background (the mean of the samples before and after); the raw ones are kept as `raw…`.
 */
async function measured(load) {
  const before = await background();
  const redis0 = await redisCounters();
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const { admits, refused } = await load();
  const wallUs = Number(process.hrtime.bigint() - t0) / 1e3;
  const cpu = process.cpuUsage(cpu0);
  const redis1 = await redisCounters();
  const after = await background();
  const bgCpu = ((before.cpu + after.cpu) / 2) * (wallUs / 1e6);
  const bgCommands = ((before.commands + after.commands) / 2) * (wallUs / 1e6);
  const redisCpu = redis1.cpu - redis0.cpu;
  const commands = redis1.commands - redis0.commands - 1; // minus the first INFO
  return {
    admits,
    refused,
    wallUs,
    admitsPerSecond: admits / (wallUs / 1e6),
    cpuUsPerAdmit: (cpu.user + cpu.system) / admits,
    coreShare: (cpu.user + cpu.system) / wallUs,
    redisCpuUsPerAdmit: (Math.max(0, redisCpu - bgCpu) * 1e6) / admits,
    redisCoreShare: (Math.max(0, redisCpu - bgCpu) * 1e6) / wallUs,
    commandsPer1000: (Math.max(0, commands - bgCommands) * 1000) / admits,
    rawRedisCpuUsPerAdmit: (redisCpu * 1e6) / admits,
    rawCommandsPer1000: (commands * 1000) / admits,
    backgroundCommandsPerSecond: (before.commands + after.commands) / 2,
    backgroundRedisCoreShare: (before.cpu + after.cpu) / 2,
  };
}

/** `n` admits, connection i % 32, from 64 concurrent callers. */
function saturated(admit, n) {
  return async () => {
    let next = 0;
    let refused = 0;
    const caller = async () => {
      while (next < n) {
        const i = next++;
        if (!(await admit(ids[i % CONNECTIONS]))) refused++;
      }
    };
    await Promise.all(Array.from({ length: CALLERS }, caller));
    return { admits: n, refused };
  };
}

/** `rate` admits/s for `seconds`, issued as they fall due (checked every 5 ms). */
function paced(admit, rate, seconds) {
  return async () => {
    const total = Math.round(rate * seconds);
    const pending = [];
    const start = performance.now();
    let issued = 0;
    while (issued < total) {
      const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000));
      for (; issued < due; issued++) pending.push(admit(ids[issued % CONNECTIONS]));
      if (issued < total) await sleep(5);
    }
    const results = await Promise.all(pending);
    return { admits: total, refused: results.filter((ok) => !ok).length };
  };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const medians = (results) =>
  Object.fromEntries(Object.keys(results[0]).map((key) => [key, median(results.map((r) => r[key]))]));

/** Limit 100 per window: how many each connection got admitted, and how many were refused. */
async function exactness(kind) {
  const limit = 100;
  const attempts = 150;
  const toBoundary = 60_000 - (Date.now() % 60_000); // the hand-made windows turn on the minute
  if (toBoundary < 3_000) await sleep(toBoundary + 100);
  const admit = limiter(kind, limit);
  const admitted = new Map(ids.map((id) => [id, 0]));
  let refused = 0;
  let next = 0;
  const caller = async () => {
    while (next < attempts * CONNECTIONS) {
      const id = ids[next++ % CONNECTIONS];
      if (await admit(id)) admitted.set(id, admitted.get(id) + 1);
      else refused++;
    }
  };
  await Promise.all(Array.from({ length: CALLERS }, caller));
  const counts = [...admitted.values()];
  return {
    min: Math.min(...counts),
    max: Math.max(...counts),
    total: counts.reduce((a, b) => a + b, 0),
    refused,
  };
}

async function deleteKeys() {
  let cursor = "0";
  let deleted = 0;
  do {
    const [nextCursor, keys] = await clients.admin.scan(cursor, "MATCH", `${PREFIX}:*`, "COUNT", 1000);
    cursor = nextCursor;
    if (keys.length > 0) deleted += await clients.admin.del(...keys);
  } while (cursor !== "0");
  return deleted;
}

const fmt = (value, digits = 1) =>
  value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });

async function main() {
  await Promise.all(Object.values(clients).map((c) => c.connect()));
  const skipped0 = (await metrics.rateLimitSkipped.get()).values[0]?.value ?? 0;
  const version = /^redis_version:(.*)$/m.exec(await clients.admin.info("server"))[1].trim();
  console.log(
    `rate limiter bench: ${ADMITS} admits/run over ${CONNECTIONS} connections, ${CALLERS} callers, ` +
      `limit ${LIMIT}/${WINDOW_SECONDS} s, ${ROUNDS} rounds A B; Redis ${version} at ${REDIS_URL}; node ${process.version}`,
  );

  // Warm-up (JIT, the Lua script loaded, connections up), not measured.
  for (const kind of ["hand", "lib", "none"]) await saturated(limiter(kind, LIMIT), 10_000)();

  const sat = { hand: [], lib: [], none: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of ["hand", "lib"])
      sat[kind].push(await measured(saturated(limiter(kind, LIMIT), ADMITS)));
  }
  for (let round = 0; round < ROUNDS; round++)
    sat.none.push(await measured(saturated(limiter("none", LIMIT), ADMITS)));

  const pace = { hand: [], lib: [], none: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const kind of ["hand", "lib", "none"]) {
      pace[kind].push(await measured(paced(limiter(kind, LIMIT), RATE, PACED_SECONDS)));
    }
  }
  const check = { hand: await exactness("hand"), lib: await exactness("lib") };
  const skipped = ((await metrics.rateLimitSkipped.get()).values[0]?.value ?? 0) - skipped0;

  const m = Object.fromEntries(Object.entries(sat).map(([kind, results]) => [kind, medians(results)]));
  const p = Object.fromEntries(Object.entries(pace).map(([kind, results]) => [kind, medians(results)]));
  const rows = [
    ["admits/s", "admitsPerSecond", 0],
    ["API CPU µs/admit", "cpuUsPerAdmit", 2],
    ["Redis CPU µs/admit", "redisCpuUsPerAdmit", 2],
    ["Redis commands/1,000 admits", "commandsPer1000", 1],
  ];
  const line = (cells) => cells.map((cell, i) => (i === 0 ? cell.padEnd(28) : cell.padStart(14))).join("");
  console.log(`\nsaturated (medians of ${ROUNDS}):`);
  console.log(line(["", "hand-made", "library", "lib/hand", "driver only"]));
  for (const [label, key, digits] of rows) {
    console.log(
      line([
        label,
        fmt(m.hand[key], digits),
        fmt(m.lib[key], digits),
        `${fmt(m.lib[key] / m.hand[key], 2)}×`,
        key === "cpuUsPerAdmit" || key === "admitsPerSecond" ? fmt(m.none[key], digits) : "",
      ]),
    );
  }
  const net = (kind) => m[kind].cpuUsPerAdmit - m.none.cpuUsPerAdmit;
  console.log(
    line([
      "API CPU µs/admit − driver",
      fmt(net("hand"), 2),
      fmt(net("lib"), 2),
      `${fmt(net("lib") / net("hand"), 2)}×`,
      "",
    ]),
  );
  console.log(
    `Redis figures net of background (other clients, median per run: hand-made runs ` +
      `${fmt(m.hand.backgroundCommandsPerSecond, 0)} commands/s, ${fmt(m.hand.backgroundRedisCoreShare * 100, 1)} % of a core; ` +
      `library runs ${fmt(m.lib.backgroundCommandsPerSecond, 0)} commands/s, ${fmt(m.lib.backgroundRedisCoreShare * 100, 1)} %); ` +
      `raw: Redis CPU µs/admit ${fmt(m.hand.rawRedisCpuUsPerAdmit, 2)} vs ${fmt(m.lib.rawRedisCpuUsPerAdmit, 2)}, ` +
      `commands/1,000 ${fmt(m.hand.rawCommandsPer1000, 1)} vs ${fmt(m.lib.rawCommandsPer1000, 1)}`,
  );
  console.log(
    `refused: hand-made ${m.hand.refused}, library ${m.lib.refused}; hand-made let through unchecked: ${skipped}`,
  );

  const estimate = (kind) => (m[kind].cpuUsPerAdmit * RATE) / 1e6;
  console.log(`\nat ${RATE} admits/s, share of one core in the API process:`);
  console.log(
    `  estimated from saturated CPU µs/admit × ${RATE} / 1e6: hand-made ${fmt(estimate("hand") * 100, 2)} %, ` +
      `library ${fmt(estimate("lib") * 100, 2)} % (driver included; minus driver: ` +
      `${fmt((net("hand") * RATE) / 1e4, 2)} %, ${fmt((net("lib") * RATE) / 1e4, 2)} %)`,
  );
  const paceNet = (kind) => p[kind].coreShare - p.none.coreShare;
  console.log(
    `  measured paced (${PACED_SECONDS} s × ${ROUNDS}, medians): hand-made ${fmt(p.hand.coreShare * 100, 2)} %, ` +
      `library ${fmt(p.lib.coreShare * 100, 2)} %, driver only ${fmt(p.none.coreShare * 100, 2)} % → ` +
      `limiter alone ${fmt(paceNet("hand") * 100, 2)} % vs ${fmt(paceNet("lib") * 100, 2)} %`,
  );
  console.log(
    `  paced, Redis server: hand-made ${fmt(p.hand.redisCoreShare * 100, 2)} % of a core ` +
      `(${fmt(p.hand.commandsPer1000, 1)} commands/1,000 admits), library ${fmt(p.lib.redisCoreShare * 100, 2)} % ` +
      `(${fmt(p.lib.commandsPer1000, 1)} commands/1,000 admits), net of background ` +
      `(${fmt(p.hand.backgroundCommandsPerSecond, 0)} and ${fmt(p.lib.backgroundCommandsPerSecond, 0)} commands/s); paced API CPU µs/admit: ` +
      `${fmt(p.hand.cpuUsPerAdmit, 2)} vs ${fmt(p.lib.cpuUsPerAdmit, 2)} (driver ${fmt(p.none.cpuUsPerAdmit, 2)})`,
  );
  console.log(
    `\nexactness at 100 per window, 150 attempts × ${CONNECTIONS} connections: ` +
      `hand-made admitted ${check.hand.min}–${check.hand.max} per connection (${check.hand.total}), refused ${check.hand.refused}; ` +
      `library admitted ${check.lib.min}–${check.lib.max} per connection (${check.lib.total}), refused ${check.lib.refused}`,
  );

  const deleted = await deleteKeys();
  console.log(`deleted ${deleted} Redis keys under ${PREFIX}:*\n`);
  const pick = (r) => ({
    admitsPerSecond: Math.round(r.admitsPerSecond),
    cpuUsPerAdmit: +r.cpuUsPerAdmit.toFixed(3),
    redisCpuUsPerAdmit: +r.redisCpuUsPerAdmit.toFixed(3),
    commandsPer1000: +r.commandsPer1000.toFixed(1),
    backgroundCommandsPerSecond: Math.round(r.backgroundCommandsPerSecond),
  });
  console.log(
    JSON.stringify({
      bench: "rate-limiter",
      admits: ADMITS,
      rounds: ROUNDS,
      handMade: pick(m.hand),
      library: pick(m.lib),
      driverOnly: {
        admitsPerSecond: Math.round(m.none.admitsPerSecond),
        cpuUsPerAdmit: +m.none.cpuUsPerAdmit.toFixed(3),
      },
      ratio: Object.fromEntries(rows.map(([, key]) => [key, +(m.lib[key] / m.hand[key]).toFixed(3)])),
      paced: {
        rate: RATE,
        redisCoreShare: {
          handMade: +p.hand.redisCoreShare.toFixed(4),
          library: +p.lib.redisCoreShare.toFixed(4),
        },
        commandsPer1000: {
          handMade: +p.hand.commandsPer1000.toFixed(1),
          library: +p.lib.commandsPer1000.toFixed(1),
        },
        coreShare: {
          handMade: +p.hand.coreShare.toFixed(4),
          library: +p.lib.coreShare.toFixed(4),
          driverOnly: +p.none.coreShare.toFixed(4),
        },
        estimatedCoreShare: { handMade: +estimate("hand").toFixed(4), library: +estimate("lib").toFixed(4) },
      },
      exactness: check,
    }),
  );
}

try {
  await main();
} finally {
  await deleteKeys().catch(() => {});
  for (const c of Object.values(clients)) c.disconnect();
}
