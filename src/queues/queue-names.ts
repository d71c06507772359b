// The closed vocabulary of BullMQ queues. Every queue is registered, and in the worker process
// consumed, by the queues module; nothing else names a queue by a loose string.

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
