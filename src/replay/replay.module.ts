import { Module } from "@nestjs/common";
import { JobsModule } from "../jobs/jobs.module.js";
import { ReplayRepository } from "./replay.repository.js";
import { ReplayQueue } from "./replay-queue.js";

/** Replay's storage and producer, shared by the API (admin routes) and the worker (bulk replays). */
@Module({
  imports: [JobsModule],
  providers: [ReplayRepository, ReplayQueue],
  exports: [ReplayRepository, ReplayQueue],
})
export class ReplayModule {}
