import { Module } from "@nestjs/common";
import { AuthModule } from "../auth/auth.module.js";
import { ListReadsModule } from "../auth/list-reads.module.js";
import { JobsAdminRepository } from "../jobs/job-reads.js";
import { TenantsModule } from "../tenants/tenants.module.js";
import { AdminDatabaseModule } from "../database/database.module.js";
import { JobsModule } from "../jobs/jobs.module.js";
import { ReplayModule } from "./replay.module.js";
import { ReplayService } from "./replay.service.js";
import { ReplaysController } from "./replays.controller.js";

/** Replay's admin routes (api.md): one job, one receipt, or a paced bulk replay with dry run and progress. */
@Module({
  imports: [AdminDatabaseModule, AuthModule, ListReadsModule, TenantsModule, JobsModule, ReplayModule],
  controllers: [ReplaysController],
  providers: [ReplayService, JobsAdminRepository],
})
export class ReplayApiModule {}
