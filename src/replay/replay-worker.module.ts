import { Module } from "@nestjs/common";
import { JobsModule } from "../jobs/jobs.module.js";
import { ReplayBatchWorker } from "./replay-batch.worker.js";
import { ReplayModule } from "./replay.module.js";

/** The worker process's side of replay: bulk replays run paced, and resumed after a shutdown or a lost job. */
@Module({ imports: [JobsModule, ReplayModule], providers: [ReplayBatchWorker] })
export class ReplayWorkerModule {}
