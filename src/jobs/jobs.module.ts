import { Module } from "@nestjs/common";
import { JobQueue } from "./job-queue.js";

/** The producer side of the jobs (API and worker). */
@Module({ providers: [JobQueue], exports: [JobQueue] })
export class JobsModule {}
