// The ingest ceiling of this machine (a copy of ../shared/bench/ceiling.mjs): Fastify parsing the
// same JSON bodies and answering 202, with no verification, database or queue. Leadgate's ingest
// cannot beat it; the ratio says how close it is. Usage: [PORT=8788] node bench/ceiling.mjs
import Fastify from "fastify";

const app = Fastify({ logger: false, bodyLimit: 262144 });
app.post("/webhooks/:provider/:connection", async (req, reply) => {
  const id = req.body?.data?.submissionId;
  if (typeof id !== "string") return reply.code(400).send({ error: "invalid_envelope" });
  return reply.code(202).send({ accepted: true, duplicate: false });
});
app.get("/", async () => ({ ok: true }));
await app.listen({ port: Number(process.env.PORT ?? 8788), host: "127.0.0.1" });
console.log("ceiling listening");
