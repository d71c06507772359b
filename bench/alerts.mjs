// Alerting's cost: N Static Forms deliveries (default 10,000) through Leadgate's API and worker
// processes to a CRM that refuses every delivery (400), so N crm-delivery jobs go dead, each round
// with two webhook channels. Prints, per round, end-to-end events/s (first request to the last job
// terminal), the alerts and notifications made, and the alert row writes per dead job as Postgres
// counts them (pg_stat_user_tables for `alerts`: inserts + updates; the job state machine raises
// job.dead once per statement and group, so a batch of failures costs one). Alerting has no off
// switch since its triggers went (migration 20261206000000_alerts_without_triggers): the state
// machine's dies raise it in their transaction. Prints figures, asserts nothing. Needs `npm run build`.
import { createServer } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import {
  ADMIN_URL,
  LOOPBACK_CRM_ENV,
  createConnection,
  dropRedisKeys,
  migratedDatabase,
  start,
} from "./processes.mjs";

const EVENTS = Number(process.env.BENCH_ALERT_EVENTS ?? 10_000);
const ROUNDS = Number(process.env.BENCH_ALERT_ROUNDS ?? 2);
const CONCURRENCY = Number(process.env.BENCH_CONNECTIONS ?? 32);
const ENCRYPTION_KEY = Buffer.alloc(32, 9).toString("base64");
const OPERATOR_KEY = "bench-operator-key-0123456789abcdef";

/** A loopback HTTP server answering `status`; counts requests by path. */
async function server(status) {
  const received = new Map();
  const http = createServer((request, response) => {
    received.set(request.url, (received.get(request.url) ?? 0) + 1);
    request.resume();
    request.on("end", () => response.writeHead(status).end());
  });
  await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${http.address().port}`, received, close: () => http.close() };
}

/** A port nothing listens on now (other benches on this machine use fixed ones). */
async function freePort() {
  const probe = createServer();
  await new Promise((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address();
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function run(crm, receiver) {
  const port = await freePort();
  const name = `leadgate_bench_alerts_${process.pid}`;
  const databaseUrl = await migratedDatabase(name);
  const sql = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const env = {
    DATABASE_URL: databaseUrl,
    LEADGATE_ENCRYPTION_KEY: ENCRYPTION_KEY,
    LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
    REDIS_PREFIX: `lg-bench-alerts-${process.pid}-${port}`,
    PORT: String(port),
    WEBHOOK_RATE_LIMIT: "10000000",
    DISPATCHER_INTERVAL_MS: "500",
    ...LOOPBACK_CRM_ENV,
  };
  const connection = createConnection(env, `${crm.url}/crm`);
  const api = await start("dist/main.js", env, /api listening/);
  const worker = await start("dist/worker.js", env, /worker started/);
  try {
    const tenantId = (await sql.query("SELECT tenant_id FROM connections")).rows[0].tenant_id;
    for (const path of ["/one", "/two"]) {
      const response = await fetch(`http://127.0.0.1:${port}/admin/notification-channels`, {
        method: "POST",
        headers: { authorization: `Bearer ${OPERATOR_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({
          type: "webhook",
          url: `${receiver.url}${path}`,
          tenantId,
        }),
      });
      if (response.status !== 201) throw new Error(`channel not created: ${response.status}`);
    }
    const url = `http://127.0.0.1:${port}/webhooks/staticforms/${connection.id}`;
    let next = 0;
    const started = Date.now();
    const sender = async () => {
      while (next < EVENTS) {
        const id = `alerts-${next++}`;
        const response = await fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${connection.bearerToken}` },
          body: JSON.stringify({
            event: "form.submitted",
            data: { submissionId: id, formData: { name: "Load", email: "l@example.test", message: "hi" } },
          }),
        });
        await response.arrayBuffer();
        if (response.status !== 202) throw new Error(`unexpected ${response.status}`);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, sender));
    let terminal;
    for (;;) {
      const { rows } = await sql.query(
        `SELECT count(*) FILTER (WHERE status IN ('succeeded', 'dead'))::int AS terminal,
                count(*) FILTER (WHERE status = 'dead')::int AS dead,
                (extract(epoch FROM max(completed_at)) * 1000)::float8 AS last_ms
         FROM jobs WHERE operation <> 'notification'`,
      );
      terminal = rows[0];
      if (terminal.terminal >= EVENTS * 2) break;
      if (Date.now() - started > 600_000) throw new Error(`timed out: ${JSON.stringify(rows[0])}`);
      await sleep(100);
    }
    const seconds = (terminal.last_ms - started) / 1000;
    for (let waited = 0; waited < 30_000 && receiver.received.size < 2; waited += 100) await sleep(100);
    const alerts = (await sql.query("SELECT type, count FROM alerts")).rows;
    // Stop the processes first: their backends flush table statistics when they exit.
    api.kill("SIGTERM");
    worker.kill("SIGTERM");
    await sleep(2_500);
    const { rows } = await sql.query(
      "SELECT (n_tup_ins + n_tup_upd)::int AS writes FROM pg_stat_user_tables WHERE relname = 'alerts'",
    );
    const notifications = [...receiver.received.values()].reduce((sum, n) => sum + n, 0);
    return {
      eventsPerSecond: EVENTS / seconds,
      seconds,
      dead: terminal.dead,
      alerts,
      alertWrites: rows[0].writes,
      notifications,
    };
  } finally {
    api.kill("SIGTERM");
    worker.kill("SIGTERM");
    await sql.end();
    await dropRedisKeys(`${env.REDIS_PREFIX}:*`);
  }
}

async function main() {
  const crm = await server(400);
  const receiver = await server(204);
  const results = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      receiver.received.clear();
      results.push(await run(crm, receiver));
    }
  } finally {
    crm.close();
    receiver.close();
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS leadgate_bench_alerts_${process.pid} WITH (FORCE)`);
    await admin.end();
  }
  console.log(
    `\nalerting (${EVENTS} Static Forms deliveries, every CRM delivery refused: ${EVENTS} dead jobs; ${ROUNDS} rounds)`,
  );
  for (const r of results) {
    const perDead = r.dead > 0 ? (r.alertWrites / r.dead).toFixed(3) : "-";
    console.log(
      `  ${Math.round(r.eventsPerSecond)} events/s end to end (${r.seconds.toFixed(1)} s), dead ${r.dead}, alerts ${JSON.stringify(r.alerts)}, notifications received ${r.notifications}, alert row writes per dead job ${perDead} (${r.alertWrites})`,
    );
  }
}

await main();
