import { Module } from "@nestjs/common";
import { SqlBatch } from "../common/sql-batch.js";
import { JobQueue } from "./job-queue.js";
import { JobStateMachine } from "./state/job-state-machine.js";

/**
 * The producer side of the jobs (API and worker), the job state machine, and the
 * naturally batched statements of the job runner's hot path (SqlBatch: also the stores the
 * processors write).
 */
@Module({
  providers: [JobQueue, JobStateMachine, SqlBatch],
  exports: [JobQueue, JobStateMachine, SqlBatch],
})
export class JobsModule {}
