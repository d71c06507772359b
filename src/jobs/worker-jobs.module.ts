import { Module } from "@nestjs/common";
import { LeadsRepository } from "../leads/leads.repository.js";
import { FollowUpModule } from "../providers/follow-up.module.js";
import { Dispatcher } from "./dispatcher.js";
import { JobContextLoader } from "./job-context.js";
import { JobRunner } from "./job-runner.js";
import { JobsModule } from "./jobs.module.js";
import { ConnectionsModule } from "../connections/connections.module.js";
import { CrmDeliveryProcessor } from "./processors/crm-delivery.processor.js";
import { InitialResponseProcessor } from "./processors/initial-response.processor.js";
import { LeadUpsertProcessor } from "./processors/lead-upsert.processor.js";
import { SideEffectsRepository } from "./side-effects.repository.js";
import { WorkerHost } from "./worker-host.js";
import { ReplayModule } from "../replay/replay.module.js";
import { ReplayBatchWorker } from "../replay/replay-batch.worker.js";

/** The consumer side: processors, the runner that mirrors job state in Postgres, the dispatcher. */
@Module({
  imports: [JobsModule, ReplayModule, ConnectionsModule, FollowUpModule],
  providers: [
    SideEffectsRepository,
    LeadsRepository,
    JobContextLoader,
    JobRunner,
    LeadUpsertProcessor,
    InitialResponseProcessor,
    CrmDeliveryProcessor,
    WorkerHost,
    Dispatcher,
    ReplayBatchWorker,
  ],
  exports: [Dispatcher],
})
export class WorkerJobsModule {}
