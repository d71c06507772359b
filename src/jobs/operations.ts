// The closed vocabulary of side effects: operations, job statuses, per-operation settings, job keys.

export const OPERATIONS = ["lead-upsert", "initial-response", "crm-delivery"] as const;
export type Operation = (typeof OPERATIONS)[number];

export const JOB_STATUSES = [
  "queued",
  "running",
  "retrying",
  "succeeded",
  "dead",
  "blocked",
  "held",
  "cancelled",
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** A BullMQ job carries ids only; the job row in Postgres holds the state. */
export interface JobPayload {
  jobId: string;
}

export interface OperationSettings {
  /** Attempts before the job is `dead`. */
  attempts: number;
  /** Base delay of the exponential backoff (ms): roughly 1 s, 5 s, 30 s, 2 min ... with jitter. */
  backoffMs: number;
  /** Jobs of this operation one worker process runs at once. */
  concurrency: number;
  /** A side-effect call taking longer is abandoned and its outcome treated as unknown. */
  timeoutMs: number;
}

/** Every operation must be tuned here: a new operation without settings does not compile. */
export const OPERATION_SETTINGS: Record<Operation, OperationSettings> = {
  "lead-upsert": { attempts: 6, backoffMs: 1_000, concurrency: 20, timeoutMs: 15_000 },
  "initial-response": { attempts: 5, backoffMs: 1_000, concurrency: 10, timeoutMs: 15_000 },
  "crm-delivery": { attempts: 8, backoffMs: 1_000, concurrency: 20, timeoutMs: 15_000 },
};

/** The readable, deterministic job key kept in Postgres: `<operation>:<scope key>`. */
export function jobKey(operation: Operation, scopeKey: string): string {
  return `${operation}:${scopeKey}`;
}

/**
 * The BullMQ job id of a job key. BullMQ ids may not contain ':' nor be all digits; a job key is
 * `<operation>:<hex>`, so replacing ':' with '.' is a fixed, reversible encoding that keeps both rules.
 */
export function bullJobId(key: string): string {
  return key.replaceAll(":", ".");
}
