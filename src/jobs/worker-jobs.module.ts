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
import { OPERATION_WORKERS } from "./operation-workers.js";
import { CrmDeliveryProcessor } from "./processors/crm-delivery.processor.js";
import { InitialResponseProcessor } from "./processors/initial-response.processor.js";
import { LeadUpsertProcessor } from "./processors/lead-upsert.processor.js";
import { SideEffectsRepository } from "./side-effects.repository.js";
import { AlertsModule } from "../alerts/alerts.module.js";
import { NotificationProcessor } from "./notifications/notification.processor.js";
import { NotificationsModule } from "./notifications/notifications.module.js";
import { SilenceSweep } from "./silence-sweep.js";

/**
 * The consumer side: processors, the runner that mirrors job state in Postgres, one BullMQ worker
 * per operation (started and stopped by the queues module), the dispatcher, the silence sweep.
 * `forRoot` takes the feature modules that provide the processors this layer cannot import
 * (featureProcessor in operation-workers.ts).
 */
@Module({
  imports: [JobsModule, FollowUpModule, OutboundModule, AlertsModule, NotificationsModule],
  providers: [
    SideEffectsRepository,
    LeadsRepository,
    JobContextLoader,
    JobRunner,
    LeadUpsertProcessor,
    InitialResponseProcessor,
    CrmDeliveryProcessor,
    NotificationProcessor,
    CircuitBreaker,
    DestinationFairness,
    ...Object.values(OPERATION_WORKERS),
    Dispatcher,
    SilenceSweep,
  ],
  exports: [Dispatcher, SilenceSweep],
})
export class WorkerJobsModule {
  static forRoot(processorModules: Type[]): DynamicModule {
    return { module: WorkerJobsModule, imports: processorModules };
  }
}
