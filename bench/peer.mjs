// The naive peer: an idempotency ledger row (INSERT ... ON CONFLICT DO NOTHING), then a BullMQ enqueue.
// No sender authentication, no normalization, no transaction between ledger and jobs, one job per event.
// Usage: DATABASE_URL=postgres://... [REDIS_URL=redis://127.0.0.1:6379] [PORT=8787] [PEER_QUEUE=bench-peer] node peer.mjs
import express from "express";
import pg from "pg";
import { Queue } from "bullmq";
import { Redis } from "ioredis";

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 20 });
const queue = new Queue(process.env.PEER_QUEUE ?? "bench-peer", {
  connection: new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379"),
});
await pool.query(`CREATE TABLE IF NOT EXISTS peer_webhook_events (
  event_id text PRIMARY KEY, event_type text NOT NULL, received_at timestamptz NOT NULL)`);

const app = express();
app.use(express.json({ limit: "256kb" }));
app.post("/webhooks/:provider/:connection", async (req, res) => {
  const id = req.body?.data?.submissionId ?? req.body?.id;
  if (typeof id !== "string") return res.status(400).json({ error: "invalid_envelope" });
  const { rowCount } = await pool.query(
    `INSERT INTO peer_webhook_events (event_id, event_type, received_at) VALUES ($1, $2, now())
     ON CONFLICT (event_id) DO NOTHING`,
    [id, String(req.body?.event ?? "unknown")],
  );
  if (rowCount === 0) return res.status(200).json({ accepted: true, duplicate: true });
  await queue.add(
    "process",
    { id },
    { jobId: `peer-${id}`, attempts: 5, backoff: { type: "exponential", delay: 500 } },
  );
  res.status(202).json({ accepted: true, duplicate: false });
});
const port = Number(process.env.PORT ?? 8787);
app.listen(port, "127.0.0.1", () => console.log(`peer listening on http://127.0.0.1:${port}`));
