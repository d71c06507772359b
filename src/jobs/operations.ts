// The closed vocabulary of side effects: operations, per-operation settings, job keys (job statuses
// and their transitions: src/jobs/state/job-states.ts).
import { sha256Hex } from "../common/canonical-json.js";
import type { Provider } from "../providers/provider-event.js";

export const OPERATIONS = [
  "lead-upsert",
  "initial-response",
  "crm-delivery",
  "provider-sync",
  "reconciliation",
  "notification",
  "provider-mark-replied",
] as const;
export type Operation = (typeof OPERATIONS)[number];

/** A side-effect record's status (side_effects: written under the job key around an external call). */
export type SideEffectStatus = "started" | "succeeded" | "skipped";

/** A BullMQ job carries ids only; the job row in Postgres holds the state. */
export interface JobPayload {
  jobId: string;
}

/**
 * What a job belongs to (docs/design.md, "Jobs"): an event (its receipt and connection), a connection
 * (provider sync, reconciliation: no receipt) or an alert (notifications: the alert's connection,
 * when it has one). The scope says what the job's context holds (src/jobs/job-context.ts).
 */
export type JobScope = "receipt" | "connection" | "alert";

export interface OperationSettings {
  scope: JobScope;
  /** Attempts before the job is `dead`. */
  attempts: number;
  /** Jobs of this operation one worker process runs at once. */
  concurrency: number;
  /**
   * The operation of the same receipt (receipt scope only) that must have succeeded first: until then the job is
   * `waiting` (`dependency`), and that job's success releases it.
   */
  after?: Operation;
}

/**
 * Every operation must be tuned here: a new operation without settings does not compile. The
 * backoff schedule (JOB_BACKOFF_BASE_MS × 5^n with jitter: 1 s, 5 s, 25 s, 2 min, 10 min, ...) and
 * the side-effect timeout (SIDE_EFFECT_TIMEOUT_MS) are the same for all operations.
 */
export const OPERATION_SETTINGS: Record<Operation, OperationSettings> = {
  // More at once make the worker's statement batches larger (src/common/sql-batch.ts).
  "lead-upsert": { scope: "receipt", attempts: 6, concurrency: 100 },
  // The first reply renders the lead as its first event's lead-upsert stored it (api.md "First replies").
  "initial-response": { scope: "receipt", attempts: 5, concurrency: 10, after: "lead-upsert" },
  // The CRM receives the lead as known after this event's lead-upsert (for Yelp, fetched by it).
  // Most run at once in the worker that ran their lead-upsert, up to 100 at once (ReleasedRuns);
  // as many slots here for the rest (retries, replays, ended waits, overflow), and a destination's
  // cap is half of that (DestinationFairness).
  "crm-delivery": { scope: "receipt", attempts: 8, concurrency: 100, after: "lead-upsert" },
  // One message to one channel about one alert opening or resolving (src/alerts/notifications/):
  // created with its alert, in the alert's transaction, through the job outbox (src/jobs/job-outbox.ts).
  notification: { scope: "alert", attempts: 8, concurrency: 10 },
  // Registering a connection's webhook with its provider (src/jobs/provider-sync.ts): 10 attempts
  // span about a day of backoff; the registration sweep starts a new sync after that.
  "provider-sync": { scope: "connection", attempts: 10, concurrency: 5 },
  // A run of one connection's reconciliation or backfill (keyed by connection + tick or backfill);
  // its worker's concurrency is RECONCILE_CONCURRENCY (src/reconciliation/).
  reconciliation: { scope: "connection", attempts: 5, concurrency: 4 },
  // Telling the provider (Yelp) that the business answered a lead outside it (POST
  // /admin/leads/{id}/mark-replied): keyed by the lead, `provider-mark-replied:<lead id>`, one per
  // lead however often it is marked. No receipt: the connection's scope, the lead in the key.
  "provider-mark-replied": { scope: "connection", attempts: 8, concurrency: 5 },
};

const DEPENDENTS = Object.fromEntries(
  OPERATIONS.map((operation) => [
    operation,
    Object.freeze(OPERATIONS.filter((dependent) => OPERATION_SETTINGS[dependent].after === operation)),
  ]),
) as Record<Operation, readonly Operation[]>;

/** The operations that run after `operation` (OperationSettings.after); read on every success. */
export function dependentsOf(operation: Operation): readonly Operation[] {
  return DEPENDENTS[operation];
}

/** The key of work done once per lead (the first auto-response), whatever event brought the lead. */
export function leadScopeKey(event: { provider: Provider; accountId: string; leadId: string }): string {
  return sha256Hex(JSON.stringify([event.provider, event.accountId, "lead", event.leadId]));
}

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
