// End-to-end throughput, side by side with the naive peer (bench/peer.mjs + bench/peer-worker.mjs):
// N Static Forms deliveries (default 3,000, each sent once, 32 connections) through one API and one
// worker process to a CRM on loopback that answers 200, from the first request until the CRM holds
// every event. Alternates peer and Leadgate (BENCH_E2E_ROUNDS rounds, default 4; each run on a fresh
// database; the peer first in odd rounds, Leadgate first in even ones, so neither always runs on the
// machine the other left) and prints each run, the medians and the ratio. Each run first warms its
// fresh processes up (BENCH_E2E_WARMUP deliveries, default 500, through to the CRM, all their jobs
// done), then measures: throughput, latency and CPU over the measured deliveries alone; rows,
// commits, Redis commands and WAL per event over warm-up and measured deliveries together (Postgres
// publishes its counts seconds late, so none can be read between the two). For Leadgate it also prints what each
// event cost: commits and rows written in its database (pg_stat_database, its own database, so other
// work on the server does not count) and Redis commands (INFO stats: server-wide, so only meaningful
// on a quiet server), and the API's peak memory (RSS). For both, the CPU each process used per event
// (API, worker, the run's database backends, Redis), from /proc, and what the Postgres server wrote
// to its WAL and how often it flushed it (pg_stat_wal: server-wide; the time a flush took only when
// the server has track_wal_io_timing on).
// BENCH_E2E_RATE=<events/s> offers the load at that rate instead of as fast as possible (for the
// acknowledgement-to-done latency below capacity); BENCH_E2E_PEER=false runs Leadgate only.
// Needs `npm run build`.
import { readFileSync } from "node:fs";
import { Agent, createServer, request } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { Queue } from "bullmq";
import { Redis } from "ioredis";
import pg from "pg";
import {
  BENCH_APPLICATION,
  LOOPBACK_CRM_ENV,
  RUN_ID,
  cpuMeter,
  createConnection,
  dropDatabase,
  dropRedisKeys,
  freePort,
  freshDatabase,
  migratedDatabase,
  start,
  stopAndFlushStats,
  walMeter,
} from "./processes.mjs";

const EVENTS = Number(process.env.BENCH_E2E_EVENTS ?? 3000);
const CONCURRENCY = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ROUNDS = Number(process.env.BENCH_E2E_ROUNDS ?? 4);
const WARMUP = Number(process.env.BENCH_E2E_WARMUP ?? 500);
const RATE = process.env.BENCH_E2E_RATE ? Number(process.env.BENCH_E2E_RATE) : undefined;
const WITH_PEER = process.env.BENCH_E2E_PEER !== "false";
const ENCRYPTION_KEY = Buffer.alloc(32, 9).toString("base64");
const TIMEOUT_MS = 600_000;

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? sorted[middle]
    : Math.round(((sorted[middle - 1] + sorted[middle]) / 2) * 100) / 100;
};

/** The loopback CRM: answers 200 at once; remembers when each event first arrived and how often. */
async function startCrm() {
  const received = new Map(); // event id -> { at, count }
  const server = createServer((request, response) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      response.writeHead(200).end();
      const { data } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      const id = data.eventId ?? data.id; // Leadgate's delivery, the peer's
      const seen = received.get(id);
      if (seen) seen.count++;
      else received.set(id, { at: Date.now(), count: 1 });
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, received, url: `http://127.0.0.1:${server.address().port}/crm` };
}

/**
 * One POST over a kept-alive connection; answers the status once the answer was read. node:http,
 * not fetch: fetch cost this process several times the CPU per request, on the same two cores as
 * the servers it measures.
 */
const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
function post(url, headers, body) {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: "POST", agent, headers }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode));
      response.on("error", reject);
    });
    req.setTimeout(60_000, () => req.destroy(new Error(`no answer from ${url} in 60 s`)));
    req.on("error", reject);
    req.end(body);
  });
}

/**
 * Sends `events` deliveries (EVENTS by default) over CONCURRENCY connections (at RATE, when set);
 * answers when each was acknowledged.
 */
async function send(url, headers, prefix, events = EVENTS) {
  const acked = new Map();
  let next = 0;
  const started = Date.now();
  const sender = async () => {
    while (next < events) {
      const n = next++;
      if (RATE) {
        const due = started + (n * 1000) / RATE;
        if (due > Date.now()) await sleep(due - Date.now());
      }
      const id = `${prefix}-${n}`;
      const body = JSON.stringify({
        event: "form.submitted",
        data: { submissionId: id, formData: { name: "Load", email: "l@example.test", message: "hi" } },
      });
      const status = await post(url, { "content-type": "application/json", ...headers }, body);
      if (status !== 202) throw new Error(`unexpected ${status}`);
      acked.set(id, Date.now());
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, sender));
  return { started, ingestedAt: Date.now(), acked };
}

async function untilDelivered(crm, started, events = EVENTS) {
  while (crm.received.size < events) {
    if (Date.now() - started > TIMEOUT_MS) throw new Error(`timed out: ${crm.received.size} delivered`);
    await sleep(50);
  }
}

/**
 * WARMUP deliveries through to the CRM (JIT, pools and caches of the run's fresh processes), then
 * `settled` (the design's jobs done); the CRM forgets them, so the measured run starts from nothing.
 */
async function warmUp(crm, url, headers, prefix, settled = async () => {}) {
  if (WARMUP === 0) return;
  const sent = await send(url, headers, `${prefix}-warm`, WARMUP);
  await untilDelivered(crm, sent.started, WARMUP);
  await settled();
  crm.received.clear();
}

/** Until the peer's queue holds no job waiting, running or to be retried. */
async function untilQueueDrained(redis, name) {
  const queue = new Queue(name, { connection: redis });
  try {
    for (;;) {
      const counts = await queue.getJobCounts("waiting", "active", "delayed", "prioritized");
      if (Object.values(counts).every((n) => n === 0)) return;
      await sleep(50);
    }
  } finally {
    await queue.close();
  }
}

/** What one run measured, from the CRM's side (the same for both). */
function outcome(crm, { started, ingestedAt, acked }) {
  const arrivals = [...crm.received.entries()];
  const lastAt = Math.max(...arrivals.map(([, { at }]) => at));
  const latencies = arrivals.map(([id, { at }]) => at - acked.get(id)).sort((a, b) => a - b);
  return {
    ingest: Math.round(EVENTS / ((ingestedAt - started) / 1000)),
    eventsPerSecond: Math.round(EVENTS / ((lastAt - started) / 1000)),
    seconds: (lastAt - started) / 1000,
    p50: Math.round(percentile(latencies, 50)),
    p99: Math.round(percentile(latencies, 99)),
    twice: arrivals.filter(([, { count }]) => count > 1).length,
  };
}

/** Peak resident memory of a process, sampled every 100 ms until stopped. */
function watchMemory(pid) {
  let peak = 0;
  const timer = setInterval(() => {
    try {
      const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]);
      peak = Math.max(peak, kb);
    } catch {
      // the process ended
    }
  }, 100);
  return () => {
    clearInterval(timer);
    return Math.round(peak / 1024);
  };
}

async function runPeer(round) {
  const crm = await startCrm();
  const databaseUrl = await freshDatabase(`leadgate_bench_e2e_peer_${RUN_ID}`);
  const queue = `bench-peer-${RUN_ID}`;
  const port = await freePort();
  const env = { DATABASE_URL: databaseUrl, PORT: String(port), CRM_URL: crm.url, PEER_QUEUE: queue };
  const api = await start("bench/peer.mjs", env, /peer listening/);
  const worker = await start("bench/peer-worker.mjs", env, /peer worker started/);
  const sql = new pg.Pool({ connectionString: databaseUrl, max: 1, application_name: BENCH_APPLICATION });
  const redis = new Redis();
  const url = `http://127.0.0.1:${port}/webhooks/staticforms/x`;
  try {
    const wal = await walMeter(sql); // Postgres publishes its counts late: over warm-up and run
    await warmUp(crm, url, {}, `peer-${round}`, () => untilQueueDrained(redis, queue));
    const cpu = await cpuMeter(sql, redis, { api, worker });
    const sent = await send(url, {}, `peer-${round}`);
    await untilDelivered(crm, sent.started);
    const cpuMsPerEvent = await cpu(EVENTS);
    await stopAndFlushStats(sql, [api, worker]);
    return { ...outcome(crm, sent), cpuMsPerEvent, walPerEvent: await wal(WARMUP + EVENTS) };
  } finally {
    await sql.end();
    redis.disconnect();
    api.kill("SIGTERM");
    worker.kill("SIGTERM");
    crm.server.close();
    await dropRedisKeys(`bull:${queue}:*`);
    await dropDatabase(databaseUrl);
  }
}

async function runLeadgate(round) {
  const crm = await startCrm();
  const databaseUrl = await migratedDatabase(`leadgate_bench_e2e_${RUN_ID}`);
  const port = await freePort();
  const env = {
    DATABASE_URL: databaseUrl,
    LEADGATE_ENCRYPTION_KEY: ENCRYPTION_KEY,
    REDIS_PREFIX: `lg-bench-e2e-${process.pid}`,
    PORT: String(port),
    WEBHOOK_RATE_LIMIT: "10000000", // one connection sends the whole load
    ...LOOPBACK_CRM_ENV,
  };
  const connection = createConnection(env, crm.url);
  const api = await start("dist/main.js", env, /api listening/);
  const worker = await start("dist/worker.js", env, /worker started/);
  const sql = new pg.Pool({ connectionString: databaseUrl, max: 2, application_name: BENCH_APPLICATION });
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
  const url = `http://127.0.0.1:${port}/webhooks/staticforms/${connection.id}`;
  const headers = { authorization: `Bearer ${connection.bearerToken}` };
  /** Until `events` events' jobs (a lead upsert and a CRM delivery each) have ended. */
  const untilJobsEnded = async (events, started) => {
    for (;;) {
      const { rows } = await sql.query(
        "SELECT count(*) FILTER (WHERE status IN ('succeeded', 'dead', 'blocked'))::int AS ended FROM jobs",
      );
      if (rows[0].ended >= events * 2) return;
      if (Date.now() - started > TIMEOUT_MS) throw new Error(`timed out: ${JSON.stringify(rows[0])}`);
      await sleep(50);
    }
  };
  try {
    // Postgres publishes its counts seconds late: they are taken over warm-up and run together.
    const before = await counters();
    const wal = await walMeter(sql);
    const warmStarted = Date.now();
    await warmUp(crm, url, headers, `lg-${round}`, () => untilJobsEnded(WARMUP, warmStarted));
    const cpu = await cpuMeter(sql, redis, { api, worker });
    const apiMemory = watchMemory(api.pid);
    const sent = await send(url, headers, `lg-${round}`);
    await untilDelivered(crm, sent.started);
    const apiPeakMiB = apiMemory();
    await untilJobsEnded(WARMUP + EVENTS, sent.started);
    const cpuMsPerEvent = await cpu(EVENTS);
    await stopAndFlushStats(sql, [api, worker]);
    const after = await counters();
    const perEvent = (key) => Number(((after[key] - before[key]) / (WARMUP + EVENTS)).toFixed(1));
    const { rows } = await sql.query(
      "SELECT count(*) FILTER (WHERE status <> 'succeeded')::int AS failed FROM jobs",
    );
    return {
      ...outcome(crm, sent),
      failed: rows[0].failed,
      apiPeakMiB,
      cpuMsPerEvent,
      walPerEvent: await wal(WARMUP + EVENTS),
      perEvent: {
        commits: perEvent("commits"),
        inserted: perEvent("inserted"),
        updated: perEvent("updated"),
        deleted: perEvent("deleted"),
        redisCommands: perEvent("commands"),
      },
    };
  } finally {
    await sql.end();
    redis.disconnect();
    api.kill("SIGTERM");
    worker.kill("SIGTERM");
    crm.server.close();
    await dropRedisKeys(`${env.REDIS_PREFIX}:*`);
    await sleep(500); // the processes' connections close
    await dropDatabase(databaseUrl);
  }
}

async function main() {
  const results = { peer: [], leadgate: [] };
  for (let round = 1; round <= ROUNDS; round++) {
    const runs = [
      ["peer", runPeer],
      ["leadgate", runLeadgate],
    ];
    for (const [name, run] of round % 2 === 1 ? runs : runs.reverse()) {
      if (name === "peer" && !WITH_PEER) continue;
      const result = await run(round);
      results[name].push(result);
      console.log(JSON.stringify({ round, target: name, ...result }));
    }
  }
  const load = RATE ? `offered at ${RATE} events/s` : "as fast as acknowledged";
  console.log(
    `\nend to end (${EVENTS} Static Forms deliveries ${load}, ${CONCURRENCY} connections, after ${WARMUP} to warm up; ${ROUNDS} rounds, the order alternating; medians; done = the CRM holds every event)`,
  );
  const line = (name) => {
    const runs = results[name];
    return `${median(runs.map((r) => r.eventsPerSecond))} events/s (runs: ${runs.map((r) => r.eventsPerSecond).join(", ")}), ingest ${median(runs.map((r) => r.ingest))} deliveries/s, ack to done p50 ${median(runs.map((r) => r.p50))} ms p99 ${median(runs.map((r) => r.p99))} ms`;
  };
  const cpu = (name) => {
    const runs = results[name].map((r) => r.cpuMsPerEvent);
    const parts = ["api", "worker", "postgres", "redis"].map((part) => [
      part,
      median(runs.map((r) => r[part])),
    ]);
    const total = parts.reduce((sum, [, ms]) => sum + ms, 0);
    return `${parts.map(([part, ms]) => `${part} ${ms}`).join(", ")}; total ${total.toFixed(2)}`;
  };
  if (WITH_PEER) console.log(`  peer:     ${line("peer")}`);
  console.log(`  leadgate: ${line("leadgate")}`);
  if (WITH_PEER) console.log(`  peer CPU per event (ms, medians):     ${cpu("peer")}`);
  console.log(`  leadgate CPU per event (ms, medians): ${cpu("leadgate")}`);
  const walLine = (name) => {
    const runs = results[name].map((r) => r.walPerEvent);
    const timed = runs.map((r) => r.msPerFlush).filter((ms) => ms !== null);
    const of = (key) => median(runs.map((r) => r[key]));
    const flushMs = timed.length > 0 ? `, ${median(timed)} ms each` : "";
    return `${of("records")} records, ${of("KiB")} KiB, ${of("fullPageImages")} full-page images, ${of("flushes")} fsyncs${flushMs}`;
  };
  const untimed = Object.values(results)
    .flat()
    .some((r) => r.walPerEvent.msPerFlush === null);
  console.log(
    `  WAL per event (medians; pg_stat_wal, server-wide${untimed ? "; an fsync's time needs track_wal_io_timing = on" : ""}):`,
  );
  if (WITH_PEER) console.log(`    peer:     ${walLine("peer")}`);
  console.log(`    leadgate: ${walLine("leadgate")}`);
  const last = results.leadgate.at(-1);
  console.log(
    `  leadgate per event: ${last.perEvent.commits} commits, ${last.perEvent.inserted} rows inserted, ${last.perEvent.updated} updated, ${last.perEvent.redisCommands} Redis commands (last run); API peak RSS ${median(results.leadgate.map((r) => r.apiPeakMiB))} MiB; jobs not succeeded ${results.leadgate.reduce((n, r) => n + r.failed, 0)}, CRM events received twice ${results.leadgate.reduce((n, r) => n + r.twice, 0)}`,
  );
  if (WITH_PEER) {
    // Each round's two runs ran back to back: their ratio is the least disturbed by other work on the machine.
    const ratios = results.leadgate.map((r, i) => r.eventsPerSecond / results.peer[i].eventsPerSecond);
    console.log(
      `  ratio:    ${median(ratios).toFixed(2)}x events/s end to end (each round's: ${ratios.map((r) => r.toFixed(2)).join(", ")})`,
    );
  }
}

await main();
