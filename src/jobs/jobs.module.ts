import { Module } from "@nestjs/common";
import { JobQueue } from "./job-queue.js";
import { ProviderSyncJobs } from "./provider-sync.js";
import { JobStateMachine } from "./state/job-state-machine.js";

/** The producer side of the jobs (API and worker), the job state machine, and provider-sync jobs. */
@Module({
  providers: [JobQueue, JobStateMachine, ProviderSyncJobs],
  exports: [JobQueue, JobStateMachine, ProviderSyncJobs],
})
export class JobsModule {}
