import type { JobContext } from "./job-context.js";
import type { Operation } from "./operations.js";

/**
 * One operation's side effect. It throws a classified error (src/common/outbound/errors.ts) on failure and
 * must be safe to run again: a re-run of a job that already took effect leaves one effect.
 */
export interface Processor {
  readonly operation: Operation;
  /** Whether the run calls a provider with the connection's credentials (blocked while they are bad). */
  needsCredentials(context: JobContext): boolean;
  run(context: JobContext): Promise<void>;
}
