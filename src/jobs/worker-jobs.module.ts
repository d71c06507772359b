import { type DynamicModule, Module, type Type } from "@nestjs/common";
import { FirstResponses } from "../leads/first-responses.js";
import { LeadsRepository } from "../leads/leads.repository.js";
import { ProviderApisModule } from "../providers/provider-apis.module.js";
import { OutboundModule } from "../common/outbound/outbound.module.js";
import { DestinationFairnessModule } from "./destination-fairness.module.js";
import { Dispatcher } from "./dispatcher.js";
import { JobContextLoader } from "./job-context.js";
import { JobRunner } from "./job-runner.js";
import { JobsModule } from "./jobs.module.js";
import { OPERATION_WORKERS } from "./operation-workers.js";
import { CrmDeliveryProcessor } from "./processors/crm-delivery.processor.js";
import { InitialResponseProcessor } from "./processors/initial-response.processor.js";
import { ReplyChannels } from "./reply-channels.js";
import { LeadUpsertProcessor } from "./processors/lead-upsert.processor.js";
import { ProviderMarkRepliedProcessor } from "./processors/provider-mark-replied.processor.js";

/**
 * The consumer side: processors, the runner that mirrors job state in Postgres, one BullMQ worker
 * per operation (started and stopped by the queues module), the dispatcher.
 * `forRoot` takes the modules of the layers above that provide the processors this layer cannot
 * import (featureProcessor in operation-workers.ts): connections' provider sync, reconciliation's,
 * and alerts' notifications.
 */
@Module({
  imports: [JobsModule, ProviderApisModule, OutboundModule, DestinationFairnessModule],
  providers: [
    LeadsRepository,
    FirstResponses,
    JobContextLoader,
    JobRunner,
    LeadUpsertProcessor,
    InitialResponseProcessor,
    ReplyChannels,
    CrmDeliveryProcessor,
    ProviderMarkRepliedProcessor,
    ...Object.values(OPERATION_WORKERS),
    Dispatcher,
  ],
  exports: [Dispatcher],
})
export class WorkerJobsModule {
  static forRoot(processorModules: Type[]): DynamicModule {
    return { module: WorkerJobsModule, imports: processorModules };
  }
}
