// The records the job state machine (src/jobs/state/job-state-machine.ts) hands out and takes:
// a claimed job, how its attempt ended, what a succeed released. Types only, but for the one
// constant that defines an abandoned run. job-state-machine.ts re-exports the public ones.
import type { EnqueueableJob } from "../job-queue.js";
import type { Operation, SideEffectStatus } from "../operations.js";
import type { JobStatus, TransitionName } from "./job-states.js";

/** A running job whose worker has not said it is alive for this long counts as abandoned (claim may take it over). */
export const ABANDONED_AFTER_MS = 30_000;

export interface ClaimedJob {
  id: string;
  tenantId: string;
  connectionId: string | null;
  receiptId: string | null;
  alertId: string | null;
  operation: Operation;
  jobKey: string;
  attempts: number;
  maxAttempts: number;
  /** When this attempt began (jobs.attempt_started_at): its attempt row is written when it ends, unless it succeeds. */
  startedAt: Date;
  /**
   * The status of the job of the same receipt this one runs after (OperationSettings.after), null
   * when it has none (or it is gone): anything but `succeeded` means wait.
   */
  dependencyStatus: JobStatus | null;
  /** What the side-effect record under the job key said when the job was claimed (null: none). */
  sideEffect: SideEffectStatus | null;
  /**
   * The code of the job's last failure (an earlier attempt's, or the one before a replay); null
   * when it never failed. Its success is then a recovery (JobOutcomes.recovered).
   */
  lastErrorCode: string | null;
}

/** How an attempt that ran ended (the attempt row's outcome). */
export type AttemptOutcome = "succeeded" | "retryable" | "permanent" | "credential";

/** The transitions that close an attempt that ran (it counts). */
export type Finish = Extract<TransitionName, "succeed" | "retry" | "die" | "block">;
/** The transitions that undo the claim: the job did not run and used no attempt. */
export type Skip = Extract<TransitionName, "hold" | "park" | "cancelRun">;

/** How many jobs a single-job transition moved (1, or 0 when the database refused it). */
export interface Moved {
  moved: number;
}

/**
 * A job a succeed released: to be enqueued, or, when the succeed was asked to claim what it
 * releases, already claimed for its first attempt here (`claimed`, as claim answers it).
 */
export interface ReleasedJob extends EnqueueableJob {
  claimed?: ClaimedJob;
  /** With `claimed`: its connection's status, settings and secrets as the claim read them (ContextRow's columns). */
  connection?: ConnectionNow;
}

/** The connection columns a release-and-claim reads anew (CONNECTION_NOW). */
export interface ConnectionNow {
  status: string;
  settings: unknown;
  credentials: string | null;
  crm_signing_secret: string | null;
  previous_crm_signing_secret: string | null;
}

/**
 * How a succeed goes beyond moving the job: whether the jobs it releases are claimed by the same
 * statement (they run in this process), and whether it writes the job's side-effect record
 * `succeeded` (Processor.recordsSuccess).
 */
export interface SucceedOptions {
  claimReleased?: boolean;
  record?: boolean;
}

/**
 * A job of a connection or an alert (OperationSettings.scope), created `queued` by `create`. Its key
 * is the caller's (jobKey): the same key never makes a second job.
 */
export interface NewJob {
  tenantId: string;
  connectionId: string | null;
  alertId?: string | null;
  operation: Operation;
  jobKey: string;
}
