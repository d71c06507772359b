// The closed vocabulary of BullMQ queues. Every queue is registered, and in the worker process
// consumed, by the queues module; nothing else names a queue by a loose string.
import type { RedisConfig } from "../config/sections.js";

export const QUEUE_NAMES = [
  // One queue per operation (src/jobs/operations.ts; an operation missing here does not compile there).
  "lead-upsert",
  "initial-response",
  "crm-delivery",
  "notification",
  "provider-sync",
  "reconciliation",
  "provider-mark-replied",
  // Bulk replays: one BullMQ job per batch (src/replay/).
  "replay-batch",
  // The scheduled retention pass (src/retention/).
  "retention",
] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

/** The queues of the vocabulary no worker consumes (the worker process fails its boot on any). */
export function unconsumed(consumed: readonly string[]): QueueName[] {
  return QUEUE_NAMES.filter((name) => !consumed.includes(name));
}

/**
 * BullMQ's key prefix of a queue (its keys are `<prefix>:<queue>:…`). One server or Sentinel:
 * REDIS_PREFIX, as always. A cluster: the queue's own hash tag `{<REDIS_PREFIX>.<queue>}`, so each
 * queue's keys (which BullMQ's scripts touch together) share one slot, while the queues hash to
 * different slots and so spread over the masters (a single `{leadgate}` would put all on one).
 */
export function queuePrefix(
  config: Pick<RedisConfig, "redisPrefix" | "redisTopology">,
  name: QueueName,
): string {
  return config.redisTopology.kind === "cluster" ? `{${config.redisPrefix}.${name}}` : config.redisPrefix;
}
