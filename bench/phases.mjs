// Where the API's CPU goes, per phase, from a V8 CPU profile (`node --cpu-prof`): each sample is
// charged to the nearest frame, from the sampled one up to the root, whose script belongs to a
// phase (so Node's internals count for whoever called them: JSON.parse for the body parser, a
// socket write for the framework, a hash for the key). Used by bench/run.mjs.
import { readFileSync } from "node:fs";

/** Phases in the order they are tried against a frame's script URL; the first match wins. */
const PHASES = [
  [
    "logging",
    /node_modules\/(pino|sonic-boom|thread-stream|pino-std-serializers|fast-redact|fast-safe-stringify)\/|dist\/observability\/(log|logger)/,
  ],
  ["metrics", /node_modules\/prom-client\/|dist\/observability\/metrics/],
  [
    "database round trip",
    /node_modules\/(pg|pg-protocol|pg-pool|pg-types|postgres-[a-z]+|@prisma)\/|dist\/ingestion\/receipt-writer|dist\/database\//,
  ],
  [
    "rate limit and queue (Redis)",
    /node_modules\/(ioredis|@ioredis|bullmq|redis-parser|redis-errors|cluster-key-slot|denque)\/|dist\/ingestion\/rate-limiter|dist\/jobs\/|dist\/queues\//,
  ],
  ["key hashing", /dist\/ingestion\/idempotency-key|dist\/common\/canonical-json/],
  ["connection lookup and secrets", /dist\/connections\/|dist\/crypto\//],
  ["verification and normalization", /dist\/providers\//],
  [
    "body parsing",
    /node_modules\/(secure-json-parse|fast-content-type-parse|content-type)\/|fastify\/lib\/content-type-parser|fastify\/lib\/contentTypeParser|platform-fastify\/.*raw-body|adapters\/fastify-adapter/,
  ],
  ["ingest logic", /dist\/ingestion\/|dist\/common\//],
  [
    "Nest pipeline (guards, interceptors, filters)",
    /node_modules\/(@nestjs|rxjs|reflect-metadata|class-validator|class-transformer|iterare)\/|dist\/(auth|http|observability)/,
  ],
  [
    "Fastify, routing and HTTP",
    /node_modules\/(fastify|find-my-way|avvio|@fastify|light-my-request|fast-json-stringify|fastq|toad-cache|process-warning|helmet|abstract-logging|rfdc|fast-querystring)\/|^node:_http|^node:http/,
  ],
];

/**
 * CPU ms per phase in a profile, of the samples taken between `from` and `to` (µs of the monotonic
 * clock, `process.hrtime` / 1000, which V8's profiles use too): { phase: ms }, with "garbage
 * collection" and "other" (idle left out).
 */
export function phasesOf(profilePath, from = 0, to = Infinity) {
  const profile = JSON.parse(readFileSync(profilePath, "utf8"));
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const phaseOf = new Map();
  const classify = (id) => {
    if (phaseOf.has(id)) return phaseOf.get(id);
    const { callFrame } = byId.get(id);
    let phase;
    if (callFrame.functionName === "(garbage collector)") phase = "garbage collection";
    else if (callFrame.functionName === "(idle)") phase = "idle";
    else phase = PHASES.find(([, pattern]) => pattern.test(callFrame.url))?.[0];
    if (!phase) phase = parent.has(id) ? classify(parent.get(id)) : "other";
    phaseOf.set(id, phase);
    return phase;
  };
  const ms = {};
  const deltas = profile.timeDeltas;
  let at = profile.startTime;
  profile.samples.forEach((id, index) => {
    at += deltas[index];
    if (at < from || at > to) return;
    const phase = classify(id);
    // A sample's time is the gap to the next one.
    const next = deltas[index + 1] ?? 0;
    ms[phase] = (ms[phase] ?? 0) + next / 1000;
  });
  delete ms.idle;
  return ms;
}
