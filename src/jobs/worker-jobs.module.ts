import { type DynamicModule, Module, type Type } from "@nestjs/common";
import { LeadsRepository } from "../leads/leads.repository.js";
import { FollowUpModule } from "../providers/follow-up.module.js";
import { OutboundModule } from "../common/outbound/outbound.module.js";
import { CircuitBreaker } from "../common/outbound/circuit-breaker.js";
import { DestinationFairness } from "./destination-fairness.js";
import { Dispatcher } from "./dispatcher.js";
import { JobContextLoader } from "./job-context.js";
import { JobRunner } from "./job-runner.js";
import { JobsModule } from "./jobs.module.js";
import { ConnectionsModule } from "../connections/connections.module.js";
import { OPERATION_WORKERS } from "./operation-workers.js";
import { CrmDeliveryProcessor } from "./processors/crm-delivery.processor.js";
import { InitialResponseProcessor } from "./processors/initial-response.processor.js";
import { LeadUpsertProcessor } from "./processors/lead-upsert.processor.js";
import { ProviderSyncProcessor } from "./processors/provider-sync.processor.js";
import { RegistrationSweep } from "./registration-sweep.js";
import { TokenRefreshSweep } from "./token-refresh-sweep.js";

/**
 * The consumer side: processors, the runner that mirrors job state in Postgres, one BullMQ worker
 * per operation (started and stopped by the queues module), the dispatcher, the token refresh and
 * registration sweeps.
 * `forRoot` takes the modules of the layers above that provide the processors this layer cannot
 * import (featureProcessor in operation-workers.ts): reconciliation's, and alerts' notifications.
 */
@Module({
  imports: [JobsModule, ConnectionsModule, FollowUpModule, OutboundModule],
  providers: [
    LeadsRepository,
    JobContextLoader,
    JobRunner,
    LeadUpsertProcessor,
    InitialResponseProcessor,
    CrmDeliveryProcessor,
    ProviderSyncProcessor,
    CircuitBreaker,
    DestinationFairness,
    ...Object.values(OPERATION_WORKERS),
    Dispatcher,
    TokenRefreshSweep,
    RegistrationSweep,
  ],
  exports: [Dispatcher, TokenRefreshSweep, RegistrationSweep],
})
export class WorkerJobsModule {
  static forRoot(processorModules: Type[]): DynamicModule {
    return { module: WorkerJobsModule, imports: processorModules };
  }
}
