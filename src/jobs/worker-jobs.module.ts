import { Module } from "@nestjs/common";
import { LeadsRepository } from "../leads/leads.repository.js";
import { ThumbtackClient } from "../providers/thumbtack/thumbtack.client.js";
import { YelpClient } from "../providers/yelp/yelp.client.js";
import { Dispatcher } from "./dispatcher.js";
import { JobContextLoader } from "./job-context.js";
import { JobRunner } from "./job-runner.js";
import { JobsModule } from "./jobs.module.js";
import { JobsRepository } from "./jobs.repository.js";
import { OPERATION_WORKERS } from "./operation-workers.js";
import { CrmDeliveryProcessor } from "./processors/crm-delivery.processor.js";
import { InitialResponseProcessor } from "./processors/initial-response.processor.js";
import { LeadUpsertProcessor } from "./processors/lead-upsert.processor.js";
import { SideEffectsRepository } from "./side-effects.repository.js";
import { ReplayModule } from "../replay/replay.module.js";
import { ReplayBatchWorker } from "../replay/replay-batch.worker.js";

/**
 * The consumer side: processors, the runner that mirrors job state in Postgres, one BullMQ worker
 * per operation (started and stopped by the queues module), bulk replays, the dispatcher.
 */
@Module({
  imports: [JobsModule, ReplayModule],
  providers: [
    JobsRepository,
    SideEffectsRepository,
    LeadsRepository,
    JobContextLoader,
    JobRunner,
    YelpClient,
    ThumbtackClient,
    LeadUpsertProcessor,
    InitialResponseProcessor,
    CrmDeliveryProcessor,
    ...Object.values(OPERATION_WORKERS),
    Dispatcher,
    ReplayBatchWorker,
  ],
  exports: [Dispatcher],
})
export class WorkerJobsModule {}
