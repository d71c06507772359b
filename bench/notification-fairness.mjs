// Notification fairness between tenants: tenant B's alerts reach B's webhook channel
// (a receiver answering in 20 ms) as fast whether or not tenant A's notification endpoint hangs (a
// receiver that never answers; the worker's call times out). An API and two workers with the
// default settings. Each alert is a real cause: a Static Forms submission delivered, then delivered
// again with other content (a payload.conflict alert of its connection, whose notification jobs the
// conflict's transaction creates), one fresh connection per alert. Three phases of BENCH_NF_SECONDS
// each, after a warm-up that is not measured: B alone; B while A raises alerts at the same rate to
// an endpoint that answers as B's does (the load of A, without the hang); B while A's endpoint
// never answers. Prints B's alert-to-received latency (from the acknowledgement of the conflicting
// delivery to B's receiver) p50/p95/p99 in each phase, the ratio of the last phase's p99 to the
// first's (the bar: within 2×) and to the second's (what the hang adds to A's load), and what A's
// notifications did meanwhile. At the default 10 alerts/s a phase has 300 of B's alerts, so its p99
// is not one slow alert. Needs `npm run build`. Prints figures, asserts nothing.
import { createServer } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import {
  LOOPBACK_CRM_ENV,
  RUN_ID,
  dropDatabase,
  dropRedisKeys,
  freePort,
  migratedDatabase,
  start,
} from "./processes.mjs";

const SECONDS = Number(process.env.BENCH_NF_SECONDS ?? 30);
const RATE = Number(process.env.BENCH_NF_RATE ?? 10); // alerts/s per tenant
const WARM_UP = 10; // alerts of B, not measured
const ENCRYPTION_KEY = Buffer.alloc(32, 9).toString("base64");
const OPERATOR_KEY = "bench-operator-key-0123456789abcdef";

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/**
 * A webhook channel's receiver on loopback: notes when each alert's notification arrived (by
 * connection), and answers in 20 ms, or never while its `hangs` is set.
 */
async function receiver() {
  const arrived = new Map();
  let held = 0;
  const state = { hangs: false };
  const server = createServer((request, response) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      const at = Date.now();
      const { data } = JSON.parse(Buffer.concat(chunks).toString("utf8"));
      if (state.hangs) {
        held += 1;
        return; // never answers: the worker's call times out
      }
      setTimeout(() => {
        if (!arrived.has(data.alert.connectionId)) arrived.set(data.alert.connectionId, at);
        response.writeHead(204).end();
      }, 20);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    server,
    arrived,
    state,
    held: () => held,
    url: `http://127.0.0.1:${server.address().port}/alerts`,
  };
}

async function main() {
  const a = await receiver();
  const b = await receiver();
  const databaseUrl = await migratedDatabase(`leadgate_bench_nfair_${RUN_ID}`);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    DATABASE_URL: databaseUrl,
    LEADGATE_ENCRYPTION_KEY: ENCRYPTION_KEY,
    LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
    REDIS_PREFIX: `lg-bench-nfair-${RUN_ID}`,
    PORT: String(port),
    ADMIN_RATE_LIMIT: "100000", // the set-up creates a connection per alert through the admin API
    ...LOOPBACK_CRM_ENV,
  };
  const api = await start("dist/main.js", env, /api listening/);
  const workers = [
    await start("dist/worker.js", env, /worker started/),
    await start("dist/worker.js", env, /worker started/),
  ];
  const sql = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const admin = async (key, path, body) => {
    const response = await fetch(`${base}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const answer = await response.json();
    if (response.status !== 201) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer)}`);
    return answer;
  };
  /** A tenant with its webhook channel to `url` and `n` Static Forms connections. */
  const tenant = async (name, url, n) => {
    const { apiKey } = await admin(OPERATOR_KEY, "/admin/tenants", { name });
    await admin(apiKey.key, "/admin/notification-channels", { type: "webhook", url });
    const connections = [];
    for (let i = 0; i < n; i++) {
      const { connection, secrets } = await admin(apiKey.key, "/admin/connections", {
        provider: "staticforms",
        externalAccountId: `${name}-${i}`,
        displayName: `${name} form ${i}`,
        inboundAuth: { type: "bearer" },
      });
      connections.push({ id: connection.id, token: secrets.bearerToken });
    }
    return connections;
  };
  const deliver = async (connection, formData) => {
    const response = await fetch(`${base}/webhooks/staticforms/${connection.id}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${connection.token}` },
      body: JSON.stringify({ event: "form.submitted", data: { submissionId: "conflicted", formData } }),
    });
    await response.arrayBuffer();
    return response.status;
  };
  /** One alert of `connection`: its submission, then the same submission with other content. Resolves its acknowledgement time. */
  const alert = async (connection) => {
    if ((await deliver(connection, { name: "First", message: "hi" })) !== 202)
      throw new Error("not accepted");
    if ((await deliver(connection, { name: "Other", message: "changed" })) !== 200)
      throw new Error("no conflict");
    return Date.now();
  };
  const perPhase = SECONDS * RATE;
  const bConnections = await tenant("bench-b", b.url, WARM_UP + 3 * perPhase);
  const aConnections = await tenant("bench-a", a.url, 2 * perPhase);
  const acked = new Map();
  /** Raises one alert per connection of `b` (and of `a`, beside it), RATE a second; resolves B's ids. */
  const phase = async (bs, as = []) => {
    const sent = [];
    for (let i = 0; i < bs.length; i++) {
      sent.push(alert(bs[i]).then((at) => acked.set(bs[i].id, at)));
      if (as[i]) sent.push(alert(as[i]));
      await sleep(1000 / RATE);
    }
    await Promise.all(sent);
    return bs.map((connection) => connection.id);
  };
  /** Waits (2 minutes at most) until `receiver` has the notification of each of `ids`' alerts. */
  const arrival = async (receiver, ids) => {
    const deadline = Date.now() + 120_000;
    while (ids.some((id) => !receiver.arrived.has(id)) && Date.now() < deadline) await sleep(100);
  };
  const latencies = async (ids) => {
    await arrival(b, ids);
    const missing = ids.filter((id) => !b.arrived.has(id)).length;
    return {
      sorted: ids
        .filter((id) => b.arrived.has(id))
        .map((id) => b.arrived.get(id) - acked.get(id))
        .sort((x, y) => x - y),
      missing,
    };
  };
  try {
    await latencies(await phase(bConnections.slice(0, WARM_UP))); // first connections, JIT
    const bPhase = (n) => bConnections.slice(WARM_UP + n * perPhase, WARM_UP + (n + 1) * perPhase);
    const alone = await latencies(await phase(bPhase(0)));
    const aHealthy = await latencies(await phase(bPhase(1), aConnections.slice(0, perPhase)));
    // A's healthy phase is over once its endpoint has every one of its alerts (none counted as held).
    await arrival(
      a,
      aConnections.slice(0, perPhase).map((connection) => connection.id),
    );
    a.state.hangs = true;
    const hanging = await latencies(await phase(bPhase(2), aConnections.slice(perPhase)));
    const { rows: aJobs } = await sql.query(
      `SELECT j.status, j.waiting_for AS "waitingFor", count(*)::int AS n
       FROM jobs j JOIN alerts al ON al.id = j.alert_id AND al.tenant_id = j.tenant_id
       WHERE j.operation = 'notification' AND al.connection_id = ANY($1::uuid[]) GROUP BY 1, 2 ORDER BY 1, 2`,
      [aConnections.slice(perPhase).map((connection) => connection.id)],
    );
    const { rows: circuit } = await sql.query("SELECT state FROM destination_circuits WHERE origin = $1", [
      new URL(a.url).origin,
    ]);
    const p99 = (phase) => percentile(phase.sorted, 99);
    const line = (name, phase) =>
      console.log(
        `  B alert to received, ${name} p50 ${percentile(phase.sorted, 50)} ms, p95 ${percentile(phase.sorted, 95)} ms, p99 ${p99(phase)} ms (${phase.sorted.length} alerts${phase.missing ? `, ${phase.missing} NOT received` : ""})`,
      );
    console.log(
      `\nnotification fairness (2 workers, ${RATE} alerts/s per tenant, ${SECONDS} s per phase; B's receiver answers in 20 ms, A's as fast, then never)`,
    );
    line("alone:                  ", alone);
    line("A's endpoint healthy:   ", aHealthy);
    line("A's endpoint hangs:     ", hanging);
    const met = p99(hanging) <= 2 * p99(alone) && hanging.missing === 0;
    console.log(
      `  B p99 hanging / alone: ${(p99(hanging) / p99(alone)).toFixed(2)}× (bar: ≤ 2×) ${met ? "met" : "NOT met"}; hanging / A healthy: ${(p99(hanging) / p99(aHealthy)).toFixed(2)}×`,
    );
    console.log(
      `  A meanwhile: ${a.held()} calls held by its endpoint; circuit ${circuit[0]?.state ?? "closed"}; its hanging phase's notification jobs: ${aJobs
        .map((row) => `${row.status}${row.waitingFor ? ` (${row.waitingFor})` : ""} ${row.n}`)
        .join(", ")}`,
    );
  } finally {
    await sql.end();
    api.kill("SIGTERM");
    for (const worker of workers) worker.kill("SIGTERM");
    a.server.closeAllConnections();
    a.server.close();
    b.server.close();
    await sleep(1000);
    await dropRedisKeys(`${env.REDIS_PREFIX}:*`);
    await dropDatabase(databaseUrl);
  }
}

await main();
