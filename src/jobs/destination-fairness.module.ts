import { Module } from "@nestjs/common";
import { CircuitBreaker } from "../common/outbound/circuit-breaker.js";
import { DestinationFairness } from "./destination-fairness.js";
import { JobsModule } from "./jobs.module.js";

/**
 * Destination fairness (the per-destination caps of this worker and the shared circuits) for every
 * processor that calls a tenant-set destination: the jobs layer's CRM deliveries and the alerts'
 * notifications (a module above, which WorkerJobsModule imports: hence a module of its own, one
 * instance for both, so the caps and circuits they share are counted once).
 */
@Module({
  imports: [JobsModule],
  providers: [CircuitBreaker, DestinationFairness],
  exports: [CircuitBreaker, DestinationFairness],
})
export class DestinationFairnessModule {}
