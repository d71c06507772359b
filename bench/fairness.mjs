// Fairness between tenants: tenant A's CRM hangs, tenant B's answers in 20 ms; an API
// and two workers with the default settings. Both tenants send at a steady rate through three
// phases (after a 5 s warm-up that is not measured): A healthy, A hanging, A recovered. Prints B's acknowledgement-to-delivered latency
// (p50/p99, measured at B's CRM) with A healthy and with A hanging, whether any of A's jobs went
// `dead` while its circuit was open, and how long A's backlog took to be delivered after A recovered.
// The bar: B's p99 with A hanging within 2× of B's p99 with A healthy; none of A's jobs dead; A's
// backlog delivered within a minute. Needs `npm run build`. Prints figures, asserts nothing.
import { createServer } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { LOOPBACK_CRM_ENV, createConnection, dropRedisKeys, start, migratedDatabase } from "./processes.mjs";

const SECONDS = Number(process.env.BENCH_FAIRNESS_SECONDS ?? 45);
const RATE = Number(process.env.BENCH_FAIRNESS_RATE ?? 10); // events/s per tenant
const ENCRYPTION_KEY = Buffer.alloc(32, 9).toString("base64");

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** A CRM on loopback that notes when each event arrived; `mode()` says how it answers now. */
async function crm(mode) {
  const arrived = new Map();
  const server = createServer((request, response) => {
    const chunks = [];
    request.on("data", (chunk) => chunks.push(chunk));
    request.on("end", () => {
      const at = Date.now();
      const eventId = JSON.parse(Buffer.concat(chunks).toString("utf8")).data.eventId;
      if (mode() === "hanging") return; // never answers: the worker's call times out
      setTimeout(() => {
        if (!arrived.has(eventId)) arrived.set(eventId, at);
        response.writeHead(200).end();
      }, 20);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, arrived, url: `http://127.0.0.1:${server.address().port}/crm` };
}

async function main() {
  let aMode = "healthy";
  const crmA = await crm(() => aMode);
  const crmB = await crm(() => "healthy");
  const databaseUrl = await migratedDatabase("leadgate_bench_fairness");
  const env = {
    DATABASE_URL: databaseUrl,
    LEADGATE_ENCRYPTION_KEY: ENCRYPTION_KEY,
    REDIS_PREFIX: `lg-bench-fairness-${process.pid}`,
    PORT: "3103",
    ...LOOPBACK_CRM_ENV,
  };
  const a = createConnection(env, crmA.url);
  const b = createConnection(env, crmB.url);
  const api = await start("dist/main.js", env, /api listening/);
  const workers = [
    await start("dist/worker.js", env, /worker started/),
    await start("dist/worker.js", env, /worker started/),
  ];
  const sql = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  const acked = new Map();
  let sequence = 0;
  const send = async (connection, tenant, phase) => {
    const id = `${tenant}-${phase}-${sequence++}`;
    const response = await fetch(`http://127.0.0.1:3103/webhooks/staticforms/${connection.id}`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${connection.bearerToken}` },
      body: JSON.stringify({
        event: "form.submitted",
        data: { submissionId: id, formData: { name: "Fair", email: "f@example.test", message: "hi" } },
      }),
    });
    await response.arrayBuffer();
    if (response.status !== 202) throw new Error(`unexpected ${response.status}`);
    acked.set(id, Date.now());
    return id;
  };
  /** Both tenants send RATE events/s for `seconds`; resolves B's event ids. */
  const phase = async (name, seconds = SECONDS) => {
    const sent = [];
    const ids = [];
    const ends = Date.now() + seconds * 1000;
    while (Date.now() < ends) {
      sent.push(
        send(a, "a", name),
        send(b, "b", name).then((id) => ids.push(id)),
      );
      await sleep(1000 / RATE);
    }
    await Promise.all(sent);
    return ids;
  };
  /** B's ack-to-delivered latencies of `ids`, once all of them arrived. */
  const latencies = async (ids) => {
    while (ids.some((id) => !crmB.arrived.has(id))) await sleep(100);
    if (process.env.BENCH_VERBOSE) {
      const start = Math.min(...ids.map((id) => acked.get(id)));
      const slowest = ids
        .map((id) => [Math.round((acked.get(id) - start) / 100) / 10, crmB.arrived.get(id) - acked.get(id)])
        .sort((x, y) => y[1] - x[1])
        .slice(0, 8);
      console.log("slowest B events [s into the phase, ms]:", JSON.stringify(slowest));
    }
    return ids.map((id) => crmB.arrived.get(id) - acked.get(id)).sort((x, y) => x - y);
  };
  const aJobs = async () =>
    (
      await sql.query(
        `SELECT count(*) FILTER (WHERE j.status = 'dead')::int AS dead,
                count(*) FILTER (WHERE j.status = 'succeeded')::int AS succeeded,
                count(*) FILTER (WHERE j.status = 'waiting' AND j.waiting_for = 'circuit')::int AS circuit,
                count(*)::int AS total
         FROM jobs j JOIN connections c ON c.id = j.connection_id
         WHERE c.id = $1 AND j.operation = 'crm-delivery'`,
        [a.id],
      )
    ).rows[0];
  try {
    await latencies(await phase("warm-up", 5)); // not measured: first connections, JIT
    const healthy = await latencies(await phase("healthy"));
    aMode = "hanging";
    const hanging = await latencies(await phase("hanging"));
    const whileOpen = await aJobs();
    const circuits = (
      await sql.query("SELECT origin, state FROM destination_circuits WHERE origin = $1", [
        new URL(crmA.url).origin,
      ])
    ).rows[0];
    const openings = (await sql.query("SELECT count(*)::int AS n FROM destination_circuit_openings")).rows[0]
      .n;
    aMode = "healthy";
    const recovered = Date.now();
    let after;
    let logged = 0;
    for (;;) {
      after = await aJobs();
      if (process.env.BENCH_VERBOSE && Date.now() - logged > 5000) {
        logged = Date.now();
        const states = await sql.query(
          `SELECT status, waiting_for, count(*)::int AS n FROM jobs WHERE connection_id = $1 AND operation = 'crm-delivery' GROUP BY 1, 2`,
          [a.id],
        );
        const circuit = await sql.query("SELECT state, probe_at FROM destination_circuits");
        console.log(
          ((Date.now() - recovered) / 1000).toFixed(0),
          JSON.stringify(states.rows),
          JSON.stringify(circuit.rows),
        );
      }
      if (after.succeeded === after.total || Date.now() - recovered > 180_000) break;
      await sleep(200);
    }
    const recoverySeconds = (Date.now() - recovered) / 1000;
    const p99Healthy = percentile(healthy, 99);
    const p99Hanging = percentile(hanging, 99);
    console.log(
      `\nfairness (2 workers, ${RATE} events/s per tenant, ${SECONDS} s per phase; B's CRM answers in 20 ms)`,
    );
    console.log(
      `  B ack to delivered, A healthy: p50 ${percentile(healthy, 50)} ms, p99 ${p99Healthy} ms (${healthy.length} events)`,
    );
    console.log(
      `  B ack to delivered, A hanging: p50 ${percentile(hanging, 50)} ms, p99 ${p99Hanging} ms (${hanging.length} events)`,
    );
    console.log(
      `  B p99 hanging / healthy: ${(p99Hanging / p99Healthy).toFixed(2)}× (bar: ≤ 2×) ${p99Hanging <= 2 * p99Healthy ? "met" : "NOT met"}`,
    );
    console.log(
      `  A while hanging: circuit ${circuits?.state ?? "closed"} (${openings} opening(s)); A's crm-delivery jobs: ${whileOpen.total}, waiting for the circuit ${whileOpen.circuit}, dead ${whileOpen.dead}`,
    );
    console.log(
      `  A recovered: all ${after.total} delivered ${after.succeeded === after.total ? `after ${recoverySeconds.toFixed(1)} s` : "NOT within 180 s"} (bar: ≤ 60 s); dead ${after.dead}`,
    );
  } finally {
    await sql.end();
    api.kill("SIGTERM");
    for (const worker of workers) worker.kill("SIGTERM");
    crmA.server.closeAllConnections();
    crmA.server.close();
    crmB.server.close();
    await dropRedisKeys(`${env.REDIS_PREFIX}:*`);
  }
}

await main();
