// Two builds of the API side by side, at the same time: which serves more ingest on this machine.
// Usage: node bench/ab.mjs DIR_A DIR_B [rounds=10] [seconds=6]
// DIR_A and DIR_B are builds inside the repository (node_modules must resolve); `dist` must be built
// too (the connection is created with it). E.g. the parent's build against the change's:
//   git checkout HEAD~1 && npm run build && rm -rf dist-a && cp -r dist dist-a
//   git checkout - && npm run build && node bench/ab.mjs dist-a dist
// A build may carry environment variables: `dist+LOG_LEVEL=warn,WEBHOOK_RATE_LIMIT=0`; NODE_ARGS
// (space-separated) are node flags given after the deployed ones (a flag given again wins).
// Each round starts both APIs on one fresh database (one Static Forms connection), warms them up,
// then drives each with bench/load.mjs (32 connections) at the same time, and prints both
// requests/s and B/A. The APIs swap ports every round. Running at once, both see the same machine:
// an A/A run here spread 0.95–1.07, where alternated runs of one change spread 0.73–1.51. The
// ratio ranks CPU per request; it is not either build's throughput alone (they share the cores).
import { spawn } from "node:child_process";
import {
  LOOPBACK_CRM_ENV,
  createConnection,
  dropDatabase,
  dropRedisKeys,
  freePort,
  migratedDatabase,
  start,
  stop,
} from "./processes.mjs";

const [A, B, ROUNDS = "10", SECONDS = "6"] = process.argv.slice(2);
if (!A || !B) {
  console.error("usage: node bench/ab.mjs DIR_A DIR_B [rounds] [seconds]");
  process.exit(2);
}
const database = await migratedDatabase("leadgate_bench_ab");
const env = {
  DATABASE_URL: database,
  LEADGATE_ENCRYPTION_KEY: Buffer.alloc(32, 9).toString("base64"),
  REDIS_PREFIX: `lg-bench-ab-${process.pid}`,
  WEBHOOK_RATE_LIMIT: "10000000",
  ...LOOPBACK_CRM_ENV,
};
const connection = createConnection(env);

function load(port, seconds) {
  const url = `http://127.0.0.1:${port}/webhooks/staticforms/${connection.id}`;
  const args = ["bench/load.mjs", url, String(seconds), "32", `Bearer ${connection.bearerToken}`];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "ignore"] });
    let out = "";
    child.stdout.on("data", (data) => (out += data));
    child.on("close", (code) =>
      code === 0
        ? resolve(JSON.parse(out.trim().split("\n").pop()))
        : reject(new Error(`load exited ${code}`)),
    );
  });
}

/**
 * An API of `spec` listening on `port`: `start` waits for its "api listening" line, which it writes
 * only once it holds the port (taken, it exits and `start` throws).
 */
function up(spec, port) {
  const [dir, extra] = spec.split("+");
  const overrides = Object.fromEntries(
    (extra ?? "")
      .split(",")
      .filter(Boolean)
      .map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
  );
  const nodeArgs = overrides.NODE_ARGS?.split(" ").filter(Boolean) ?? [];
  return start(
    `${dir}/main.js`,
    { ...env, ...overrides, PORT: String(port) },
    /api listening/,
    30_000,
    nodeArgs,
  );
}

const ratios = [];
try {
  for (let round = 1; round <= Number(ROUNDS); round++) {
    const ports = [await freePort(), await freePort()];
    while (ports[1] === ports[0]) ports[1] = await freePort();
    if (round % 2 === 0) ports.reverse();
    const apis = [await up(A, ports[0])];
    try {
      apis.push(await up(B, ports[1]));
      await Promise.all(ports.map((port) => load(port, 2)));
      const [a, b] = await Promise.all(ports.map((port) => load(port, Number(SECONDS))));
      ratios.push(b.rps / a.rps);
      console.log(
        JSON.stringify({
          round,
          A: Math.round(a.rps),
          B: Math.round(b.rps),
          ratio: Number((b.rps / a.rps).toFixed(3)),
        }),
      );
    } finally {
      await Promise.all(apis.map(stop));
    }
  }
  const sorted = [...ratios].sort((x, y) => x - y);
  const geometric = Math.exp(ratios.reduce((sum, r) => sum + Math.log(r), 0) / ratios.length);
  console.log(
    `B/A: median ${sorted[Math.floor(sorted.length / 2)].toFixed(3)}, geometric mean ${geometric.toFixed(3)}, rounds ${sorted.map((r) => r.toFixed(2)).join(" ")}`,
  );
} finally {
  await dropDatabase(database);
  await dropRedisKeys(`${env.REDIS_PREFIX}:*`);
}
