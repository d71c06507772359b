import { Module } from "@nestjs/common";
import { SqlBatch } from "../common/sql-batch.js";
import { JobOutbox } from "./job-outbox.js";
import { JobQueue } from "./job-queue.js";
import { SideEffectsRepository } from "./side-effects.repository.js";
import { JobStateMachine } from "./state/job-state-machine.js";

/**
 * The producer side of the jobs (API and worker), the job state machine, the job outbox (jobs
 * created in a caller's transaction), the side-effect records of processors,
 * and the naturally batched statements of the job runner's hot path (SqlBatch: also the stores the
 * processors write).
 */
@Module({
  providers: [JobQueue, JobStateMachine, JobOutbox, SideEffectsRepository, SqlBatch],
  exports: [JobQueue, JobStateMachine, JobOutbox, SideEffectsRepository, SqlBatch],
})
export class JobsModule {}
