import { Module } from "@nestjs/common";
import { AdminModule } from "../admin/admin.module.js";
import { AdminDatabaseModule } from "../database/database.module.js";
import { JobsModule } from "../jobs/jobs.module.js";
import { ReplayModule } from "./replay.module.js";
import { ReplayService } from "./replay.service.js";
import { ReplaysController } from "./replays.controller.js";

/** Replay's admin routes (api.md): one job, one receipt, or a paced bulk replay with dry run and progress. */
@Module({
  imports: [AdminDatabaseModule, AdminModule, JobsModule, ReplayModule],
  controllers: [ReplaysController],
  providers: [ReplayService],
})
export class ReplayApiModule {}
