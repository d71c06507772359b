// Leadgate's database floor for ingest: bare Fastify (as bench/ceiling.mjs) in front of Leadgate's
// own receipt writer (dist/ingestion/receipt-writer.js: the same statement, natural batching and
// commit per batch, the job outbox NOTIFY), and nothing else: no connection lookup, sender
// verification, rate limit, Nest pipeline, metrics or logging. What it serves is what Leadgate's
// ingest could serve on this machine if everything but its durable write cost nothing; the gap
// between it and Leadgate is the application, the gap between it and the ceiling is the database.
// Usage: DATABASE_URL=… FLOOR_TENANT=<uuid> FLOOR_CONNECTION=<uuid> [PORT=8789] node bench/floor.mjs
// (a migrated Leadgate database and one of its Static Forms connections). Needs `npm run build`.
import { Logger } from "@nestjs/common";
import Fastify from "fastify";
import pg from "pg";
import { sha256Hex as sha256 } from "../dist/common/canonical-json.js";
import { ReceiptWriter } from "../dist/ingestion/receipt-writer.js";
import { OPERATION_SETTINGS, jobKey } from "../dist/jobs/operations.js";

Logger.overrideLogger(false);
const { DATABASE_URL, FLOOR_TENANT: tenantId, FLOOR_CONNECTION: connectionId } = process.env;
// The pool as Leadgate's main pool is (src/database/prisma.service.ts); the writer only uses `pool`
// (and Prisma for payload conflicts, which this load never sends).
const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 10, statement_timeout: 10_000 });
const writer = new ReceiptWriter({ pool }, undefined, { ingestQueueLimit: 10_000 });

const app = Fastify({ logger: false, bodyLimit: 262144 });
app.post("/webhooks/:provider/:connection", async (req, reply) => {
  const id = req.body?.data?.submissionId;
  if (typeof id !== "string") return reply.code(400).send({ error: "invalid_envelope" });
  const idempotencyKey = sha256(`staticforms\n${connectionId}\nform.submitted:${id}`);
  const [outcome] = await writer.write([
    {
      tenantId,
      connectionId,
      idempotencyKey,
      payloadDigest: sha256(JSON.stringify(req.body)),
      event: {
        provider: "staticforms",
        accountId: connectionId,
        eventId: id,
        leadId: id,
        kind: "lead.created",
        occurredAt: new Date(),
        payload: req.body,
      },
      jobs: [
        {
          operation: "lead-upsert",
          jobKey: jobKey("lead-upsert", idempotencyKey),
          status: "queued",
          maxAttempts: OPERATION_SETTINGS["lead-upsert"].attempts,
        },
      ],
    },
  ]);
  return reply.code(outcome.inserted ? 202 : 200).send({ accepted: true, duplicate: !outcome.inserted });
});
app.get("/", async () => ({ ok: true }));
await app.listen({ port: Number(process.env.PORT ?? 8789), host: "127.0.0.1" });
console.log("floor listening");
