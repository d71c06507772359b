import { Module } from "@nestjs/common";
import { JobQueue } from "./job-queue.js";
import { JobStateMachine } from "./state/job-state-machine.js";

/** The producer side of the jobs (API and worker), and the job state machine. */
@Module({ providers: [JobQueue, JobStateMachine], exports: [JobQueue, JobStateMachine] })
export class JobsModule {}
