import { Module } from "@nestjs/common";
import { LeadsRepository } from "../leads/leads.repository.js";
import { ThumbtackClient } from "../providers/thumbtack/thumbtack.client.js";
import { YelpClient } from "../providers/yelp/yelp.client.js";
import { Dispatcher } from "./dispatcher.js";
import { JobContextLoader } from "./job-context.js";
import { JobRunner } from "./job-runner.js";
import { JobsModule } from "./jobs.module.js";
import { JobsRepository } from "./jobs.repository.js";
import { CrmDeliveryProcessor } from "./processors/crm-delivery.processor.js";
import { InitialResponseProcessor } from "./processors/initial-response.processor.js";
import { LeadUpsertProcessor } from "./processors/lead-upsert.processor.js";
import { SideEffectsRepository } from "./side-effects.repository.js";
import { WorkerHost } from "./worker-host.js";

/** The consumer side: processors, the runner that mirrors job state in Postgres, the dispatcher. */
@Module({
  imports: [JobsModule],
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
    WorkerHost,
    Dispatcher,
  ],
  exports: [Dispatcher],
})
export class WorkerJobsModule {}
