import type { JobContext } from "./job-context.js";
import type { Operation } from "./operations.js";

/**
 * One operation's side effect. It throws a classified error (src/common/outbound/errors.ts) on failure and
 * must be safe to run again: a re-run of a job that already took effect leaves one effect. `Context`
 * is its operation's scope's context (ScopeContexts): an event's side effect by default.
 */
export interface Processor<Context = JobContext> {
  readonly operation: Operation;
  /** Whether the run calls a provider with the connection's credentials (blocked while they are bad). */
  needsCredentials(context: Context): boolean;
  /**
   * Whether the job runs although its connection is disabled (a disconnect's clean-up: removing the
   * provider webhook). Without it, a disabled connection's job is cancelled instead of run.
   */
  runsWhileDisabled?(context: Context): boolean;
  /**
   * Whether the run that just succeeded took effect, so its success writes the side-effect record
   * (`succeeded`, under the job key) in the statement that records the success: for an effect not
   * repeated once done (a later job under the same key finds `job.sideEffect` succeeded) whose
   * destination dedupes a repeat by the key, so a run whose outcome is unknown needs no record of
   * its start.
   */
  recordsSuccess?(context: Context): boolean;
  run(context: Context): Promise<void>;
}
