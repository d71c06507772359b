// The naive peer's worker: takes peer.mjs's jobs ({ id }) from the same BullMQ queue, upserts a lead
// row, then POSTs the event to a CRM URL. No attempt history, no keyed side-effect record, no
// dependency between steps, no outbox: the floor Leadgate's end-to-end throughput is compared with.
// Usage: DATABASE_URL=postgres://... CRM_URL=http://127.0.0.1:PORT/crm [REDIS_URL=...] [CONCURRENCY=50] node peer-worker.mjs
// (A copy of ../shared/bench/peer-worker.mjs, run by bench/e2e.mjs side by side with Leadgate; PEER_QUEUE
// names its queue, so that two benchmarks on one machine do not take each other's jobs.)
import pg from "pg";
import { Worker } from "bullmq";
import { Redis } from "ioredis";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const crmUrl = process.env.CRM_URL;
if (!crmUrl) throw new Error("CRM_URL is required");
await pool.query(`CREATE TABLE IF NOT EXISTS peer_leads (
  lead_id text PRIMARY KEY, name text, updated_at timestamptz NOT NULL)`);

const connection = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", {
  maxRetriesPerRequest: null,
});
const worker = new Worker(
  process.env.PEER_QUEUE ?? "bench-peer",
  async (job) => {
    const { id } = job.data;
    await pool.query(
      `INSERT INTO peer_leads (lead_id, name, updated_at) VALUES ($1, $2, now())
       ON CONFLICT (lead_id) DO UPDATE SET name = EXCLUDED.name, updated_at = now()`,
      [id, "Bench Lead"],
    );
    const response = await fetch(crmUrl, {
      method: "POST",
      headers: { "content-type": "application/json", "idempotency-key": id },
      body: JSON.stringify({ type: "lead.created", data: { id, name: "Bench Lead" } }),
    });
    if (!response.ok) throw new Error(`crm ${response.status}`);
  },
  { connection, concurrency: Number(process.env.CONCURRENCY ?? 50), removeOnComplete: { count: 1000 } },
);
worker.on("ready", () => console.log("peer worker started"));
const stop = async () => {
  await worker.close();
  await pool.end();
  connection.disconnect();
  process.exit(0);
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
