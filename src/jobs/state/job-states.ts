// The job state machine's vocabulary: every status, every transition with the statuses it may start
// from, and the one attempt policy of a requeue. Pure data: the statements that apply a transition
// (src/jobs/state/job-state-machine.ts and the statement modules it delegates to) name these source
// statuses in their WHERE, so the database refuses an illegal transition rather than applying it.

export const JOB_STATUSES = [
  "queued",
  "running",
  "retrying",
  "waiting",
  "succeeded",
  "dead",
  "blocked",
  "held",
  "cancelled",
] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/**
 * Why a `waiting` job may not run yet (it uses no attempt meanwhile): its receipt's lead-upsert has
 * not succeeded, a provider's rate budget or Retry-After, its destination's open circuit, or its
 * connection's reply delay (a first reply waits `delaySeconds` for a person to answer first).
 */
export const WAITING_FOR = ["dependency", "quota", "circuit", "delay"] as const;
export type WaitingFor = (typeof WAITING_FOR)[number];

/** Statuses a job never leaves on its own: only an operator (replay, resume) moves it on. */
export const TERMINAL: readonly JobStatus[] = ["succeeded", "dead", "cancelled"];

/** Still on its way: a replay answers 409 job_in_progress. */
export const IN_PROGRESS: readonly JobStatus[] = ["queued", "running", "retrying", "waiting"];

export interface Transition {
  /** The statuses the transition may start from; any other is refused by the statement's WHERE. */
  readonly from: readonly JobStatus[];
  readonly to: JobStatus;
  /** Whether the attempt the claim opened counts (false: it is removed, the job used no attempt). */
  readonly countsAttempt?: boolean;
}

/**
 * Every transition of a job. `claim` also takes a `running` job whose worker stopped renewing it
 * (abandoned) and a `waiting` job whose time-based wait (quota, circuit) is over.
 */
export const TRANSITIONS = {
  /** A worker takes the job for one attempt (attempts + 1, an attempt row opened). */
  claim: { from: ["queued", "retrying", "waiting", "running"], to: "running" },
  succeed: { from: ["running"], to: "succeeded", countsAttempt: true },
  /** A retryable failure with attempts left: runs again at next_attempt_at (backoff). */
  retry: { from: ["running"], to: "retrying", countsAttempt: true },
  /** A permanent failure, or the attempts ran out. */
  die: { from: ["running"], to: "dead", countsAttempt: true },
  /** The provider refused the connection's credentials during the attempt. */
  block: { from: ["running"], to: "blocked", countsAttempt: true },
  /** Claimed, but the connection is paused: waits for resume, no attempt used. */
  hold: { from: ["running"], to: "held", countsAttempt: false },
  /** Claimed, but the connection's credentials are known bad: no attempt used. */
  park: { from: ["running"], to: "blocked", countsAttempt: false },
  /** Claimed, but the connection is disabled. */
  cancelRun: { from: ["running"], to: "cancelled", countsAttempt: false },
  /** The connection was disabled: its jobs not running now never will. */
  cancel: { from: ["queued", "retrying", "waiting", "held", "blocked"], to: "cancelled" },
  /** May not run yet (waitingFor says why): no attempt used. */
  wait: { from: ["running"], to: "waiting", countsAttempt: false },
  /** Waited longer than JOB_MAX_WAIT_SECONDS: dead with wait_expired. */
  expire: { from: ["waiting"], to: "dead" },
  /**
   * A held or blocked job whose connection is active again (a worker parked it just as the
   * connection was resumed, or a delivery stored it held just after), or a job waiting for its
   * dependency once that succeeded.
   */
  release: { from: ["held", "blocked", "waiting"], to: "queued" },
  /** An operator resumed (or reconnected) the connection. */
  resume: { from: ["held", "blocked"], to: "queued" },
  /** An operator replays a finished job (succeeded only with force). */
  replay: { from: ["dead", "blocked", "cancelled", "succeeded"], to: "queued" },
} as const satisfies Record<string, Transition>;
export type TransitionName = keyof typeof TRANSITIONS;

/** The statuses a replay starts from without `force`. */
export const REPLAYABLE = ["dead", "blocked", "cancelled"] as const satisfies readonly JobStatus[];
export type ReplayableStatus = (typeof REPLAYABLE)[number];

/** Whether `transition` may start from `status` (the statements enforce the same rule in SQL). */
export function allowed(transition: TransitionName, status: JobStatus): boolean {
  return (TRANSITIONS[transition].from as readonly JobStatus[]).includes(status);
}

/** The statuses of a transition's `from`, narrowed to `only` (e.g. a replay of dead jobs only). */
export function sourceStatuses(transition: TransitionName, only?: readonly JobStatus[]): JobStatus[] {
  const from = TRANSITIONS[transition].from as readonly JobStatus[];
  return only ? from.filter((status) => only.includes(status)) : [...from];
}

/**
 * The one attempt policy of every requeue (replay, resume, release): attempts already made stay
 * counted (the history keeps its numbering) and the job gets its operation's full allowance again
 * from there, so a job never comes back with no attempt left.
 */
export function requeuedMaxAttempts(attemptsMade: number, allowance: number): number {
  return attemptsMade + allowance;
}

/**
 * The status a new job starts in: held while its connection is paused; waiting (for its
 * dependency) when it runs after another job of its receipt; else queued.
 */
export function initialStatus(
  connectionPaused: boolean,
  hasDependency = false,
): Extract<JobStatus, "queued" | "held" | "waiting"> {
  if (connectionPaused) return "held";
  return hasDependency ? "waiting" : "queued";
}
