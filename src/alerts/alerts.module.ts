import { Global, Module } from "@nestjs/common";
import { CIRCUIT_EVENTS } from "../common/outbound/circuit-events.js";
import { JOB_OUTCOMES } from "../jobs/job-outcomes.js";
import { JobOutbox } from "../jobs/job-outbox.js";
import { AlertBook } from "./alert-book.js";
import { DeadJobAlerts } from "./dead-job-alerts.js";
import { DestinationAlerts } from "./destination-alerts.js";
import { NotificationChannels } from "./notification-channels.repository.js";
import { NotificationOutbox } from "./notifications/notification-outbox.js";

/**
 * The alert book with its notification outbox, and the notification channels: the stores that
 * raise and clear alerts (ingest, connections, registration, reconciliation) and the admin API use
 * them. The job outbox it creates notifications through takes the caller's transaction, so it is
 * this module's own instance (not JobsModule's, whose state machine calls back into alerts).
 */
@Module({
  providers: [AlertBook, NotificationOutbox, JobOutbox, NotificationChannels],
  exports: [AlertBook, NotificationOutbox, NotificationChannels],
})
export class AlertsModule {}

/**
 * The alerts' side of the ports of the layers below: JobOutcomes (job.dead, called by the job
 * state machine) and CircuitEvents (destination.failing, called by the circuit breaker). Global,
 * so the modules of those layers find the tokens without importing this one; each process's root
 * module imports it, and a process without it does not boot.
 */
@Global()
@Module({
  imports: [AlertsModule],
  providers: [
    DeadJobAlerts,
    DestinationAlerts,
    { provide: JOB_OUTCOMES, useExisting: DeadJobAlerts },
    { provide: CIRCUIT_EVENTS, useExisting: DestinationAlerts },
  ],
  exports: [JOB_OUTCOMES, CIRCUIT_EVENTS],
})
export class AlertPortsModule {}
