// Starting Leadgate's processes for the benchmarks. Their output goes to a file, not a pipe: a
// process writing to a pipe blocks when the reader falls behind (stdout pipes are synchronous on
// Linux), and the benchmark would then measure its own reading instead of the service.
import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, openSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer } from "node:net";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import pg from "pg";

const logDir = mkdtempSync(join(tmpdir(), "leadgate-bench-"));

/**
 * The API's node flags as deployed (package.json start:api, scripts/start.mjs, Dockerfile): 4 MiB
 * semi-spaces, and an old generation that grows by 15 % of its live size between major collections.
 */
const API_NODE_ARGS = ["--max-semi-space-size=4", "--heap-growing-percent=15"];

export async function start(script, env, readyPattern, timeoutMs = 30_000, extraNodeArgs = []) {
  const logFile = join(logDir, `${script.replaceAll("/", "_")}-${Date.now()}.log`);
  const fd = openSync(logFile, "w");
  // BENCH_NODE_ARGS: extra node flags for the started processes (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
  // The API's deployed flags first: a flag given again later (BENCH_NODE_ARGS, extraNodeArgs) wins.
  const nodeArgs = [
    ...(/^dist[^/]*\/main\.js$/.test(script) ? API_NODE_ARGS : []),
    ...(process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean),
    ...extraNodeArgs,
  ];
  // Leadgate's processes as deployed (scripts/start.mjs, package.json, Dockerfile): 2 malloc arenas.
  const deployed = /^dist[^/]*\//.test(script) ? { MALLOC_ARENA_MAX: "2" } : {};
  const child = spawn(process.execPath, [...nodeArgs, script], {
    env: { ...process.env, ...deployed, ...env },
    stdio: ["ignore", fd, fd],
  });
  let exited;
  child.on("exit", (code) => (exited = code));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const output = readFileSync(logFile, "utf8");
    if (readyPattern.test(output)) return child;
    if (exited !== undefined || Date.now() > deadline) {
      throw new Error(`${script} did not start (exit ${exited}):\n${output.slice(-2000)}`);
    }
    await sleep(50);
  }
}

/** A tenant and a Static Forms connection (bench/create-connection.mjs with `env`, delivering to `crmUrl` when given): what it prints. */
export function createConnection(env, crmUrl) {
  const out = execFileSync(process.execPath, ["bench/create-connection.mjs"], {
    env: { ...process.env, ...env, ...(crmUrl === undefined ? {} : { BENCH_CRM_URL: crmUrl }) },
    encoding: "utf8",
  });
  return JSON.parse(out.trim().split("\n").pop());
}

/** The benches' CRMs listen on loopback over http: what Leadgate must be told to call them. */
export const LOOPBACK_CRM_ENV = { DESTINATION_ALLOW_HTTP: "true", DESTINATION_ALLOW_CIDRS: "127.0.0.0/8" };

export const ADMIN_URL = process.env.BENCH_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

/**
 * A suffix that keeps this run's databases, ports and queues apart from another run's on the same
 * machine (another worktree's benchmark or test suite).
 */
export const RUN_ID = `${process.pid}`;

/**
 * An admin API client of a started API on `port` with `key` (an operator's): `admin(method, path,
 * body?)` answers the parsed JSON body, and throws on any status from 300 up.
 */
export function adminClient(port, key) {
  return async (method, path, body) => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
    return JSON.parse(text);
  };
}

/** A TCP port free on loopback now. */
export async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Drops a database (at a benchmark's end). */
export async function dropDatabase(url) {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)} WITH (FORCE)`);
  await admin.end();
}

/** Drops and creates a database; returns its URL. */
export async function freshDatabase(name) {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return Object.assign(new URL(ADMIN_URL), { pathname: `/${name}` }).toString();
}

/** A fresh database with Leadgate's migrations applied (scripts/migrate.mjs): its URL. */
export async function migratedDatabase(name) {
  const url = await freshDatabase(name);
  execFileSync(process.execPath, ["scripts/migrate.mjs"], {
    env: { ...process.env, DATABASE_URL: url },
    stdio: "ignore",
  });
  return url;
}

/** Deletes a benchmark's Redis keys (jobs no worker took would otherwise pile up run after run). */
export async function dropRedisKeys(pattern) {
  const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  try {
    for await (const keys of redis.scanStream({ match: pattern, count: 1000 })) {
      if (keys.length > 0) await redis.unlink(...keys);
    }
  } finally {
    redis.disconnect();
  }
}

/** The benchmark's own database connections (left out of the CPU it counts). */
export const BENCH_APPLICATION = "leadgate-bench";
const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());

/** CPU time (user + system, all threads) a process has used, in ms; 0 once it has ended. */
export function cpuMs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}

/** Stops a started process (SIGTERM; SIGKILL if it has not exited 15 s later) and waits for its exit. */
export function stop(child) {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const stuck = setTimeout(() => child.kill("SIGKILL"), 15_000);
    child.once("exit", () => resolve(clearTimeout(stuck)));
    child.kill("SIGTERM");
  });
}

/**
 * Stops `processes` and waits until their database sessions have ended. A Postgres backend keeps
 * up to its last second of statistics (`pg_stat_database`, `pg_stat_wal`) for as long as 10 s once
 * idle, and reports them when it exits: counters read after this hold all of a run's work.
 */
export async function stopAndFlushStats(sql, processes) {
  await Promise.all(processes.map(stop));
  const deadline = Date.now() + 15_000;
  for (;;) {
    const { rows } = await sql.query(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name <> $1",
      [BENCH_APPLICATION],
    );
    if (rows[0].n === 0 || Date.now() > deadline) break;
    await sleep(50);
  }
  await sleep(200); // an exiting backend's report reaches the shared statistics
}

/**
 * What the Postgres server wrote to its WAL from now until the returned function is called, per
 * unit: records, KiB, full-page images, and `fsync`s of the WAL (`pg_stat_wal.wal_sync`, Postgres
 * 14–17; none with `wal_sync_method = open_datasync`), with the average ms one took when the
 * server has `track_wal_io_timing` on (else null). A commit that answers only once durable waits
 * for one of them (and, when another is in progress, for that one first). Server-wide, so only
 * meaningful on a quiet server; read it after `stopAndFlushStats`, or the backends' last second is
 * missing.
 */
export async function walMeter(sql) {
  const read = async () =>
    (
      await sql.query(
        `SELECT wal_records::float8 AS records, wal_bytes::float8 AS bytes, wal_fpi::float8 AS fpi,
                wal_sync::float8 AS flushes, wal_sync_time AS "flushMs",
                current_setting('track_wal_io_timing')::boolean AS timed
         FROM pg_stat_wal`,
      )
    ).rows[0];
  const before = await read();
  return async (units) => {
    const after = await read();
    const delta = (key) => after[key] - before[key];
    return {
      records: Number((delta("records") / units).toFixed(1)),
      KiB: Number((delta("bytes") / 1024 / units).toFixed(2)),
      fullPageImages: Number((delta("fpi") / units).toFixed(2)),
      flushes: Number((delta("flushes") / units).toFixed(2)),
      msPerFlush:
        after.timed && delta("flushes") > 0 ? Number((delta("flushMs") / delta("flushes")).toFixed(2)) : null,
    };
  };
}

/**
 * Counts the CPU the run's processes use from now until the returned function is called with the
 * number of units (events, accepted requests) to divide by: each of `processes` (name → child), the
 * database backends of `sql`'s database but the benchmark's own (pg_stat_activity, application_name
 * BENCH_APPLICATION; one that ended in between is missed) and the Redis server (server-wide). In ms
 * per unit: where each design spends its CPU. It moves with the machine's speed as throughput
 * does, so only the runs of one invocation compare.
 */
export async function cpuMeter(sql, redis, processes) {
  const backends = async () =>
    (
      await sql.query(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name <> $1",
        [BENCH_APPLICATION],
      )
    ).rows.map((row) => row.pid);
  const redisPid = Number(/process_id:(\d+)/.exec(await redis.info("server"))[1]);
  const pids = [...Object.values(processes).map((child) => child.pid), redisPid, ...(await backends())];
  const before = new Map(pids.map((pid) => [pid, cpuMs(pid)]));
  const used = (pid) => cpuMs(pid) - (before.get(pid) ?? 0);
  return async (units) => {
    const per = (ms) => Number((ms / units).toFixed(3));
    const result = Object.fromEntries(
      Object.entries(processes).map(([name, child]) => [name, per(used(child.pid))]),
    );
    result.postgres = per((await backends()).reduce((sum, pid) => sum + used(pid), 0));
    result.redis = per(used(redisPid));
    return result;
  };
}
