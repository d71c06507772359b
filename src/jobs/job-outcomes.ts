// The job engine's port for what a job's end means beyond its row: the alerts module's job.dead
// (src/alerts/dead-job-alerts.ts) implements it, this layer only calls it. The state machine
// calls it inside the transaction of the statement that moved the jobs, once per statement with
// all the jobs it moved, so what it writes commits with the status change or not at all.
import type { InjectionToken } from "@nestjs/common";
import type { Tx } from "../database/transactions.js";
import type { Operation } from "./operations.js";

/** A job whose status a statement changed, by the columns that group its failures. */
export interface JobOutcome {
  tenantId: string;
  connectionId: string | null;
  operation: Operation;
  /** The job's last error code: the one it died with, or the one of the failure before its success. */
  errorCode: string | null;
}

export interface JobOutcomes {
  /** Jobs one statement moved to `dead` (die, expire). */
  died(tx: Tx, jobs: readonly JobOutcome[]): Promise<void>;
  /** Jobs one statement moved to `succeeded` that had failed before (a retry that passed, a replay). */
  recovered(tx: Tx, jobs: readonly JobOutcome[]): Promise<void>;
}

/**
 * The injection token of the JobOutcomes the job state machine calls. A global module of the layer
 * above provides it (AlertPortsModule); a process without it does not boot.
 */
export const JOB_OUTCOMES: InjectionToken = "jobs:outcomes";
