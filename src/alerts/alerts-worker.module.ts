import { Module } from "@nestjs/common";
import { DestinationFairnessModule } from "../jobs/destination-fairness.module.js";
import { JobsModule } from "../jobs/jobs.module.js";
import { featureProcessor } from "../jobs/operation-workers.js";
import { AlertsModule } from "./alerts.module.js";
import { NotificationProcessor } from "./notifications/notification.processor.js";
import { NotificationsModule } from "./notifications/notifications.module.js";
import { ReopeningSweep } from "./notifications/reopening-sweep.js";
import { SilenceSweep } from "./silence-sweep.js";
import { UnansweredSweep } from "./unanswered-sweep.js";

/**
 * The worker's side of alerts: the `notification` operation's processor (handed to
 * WorkerJobsModule by the worker entry point: featureProcessor), the silence sweep, the
 * unanswered-lead sweep and the re-opening sweep (deferred re-opening notifications).
 */
@Module({
  imports: [AlertsModule, NotificationsModule, JobsModule, DestinationFairnessModule],
  providers: [
    NotificationProcessor,
    { provide: featureProcessor("notification"), useExisting: NotificationProcessor },
    SilenceSweep,
    UnansweredSweep,
    ReopeningSweep,
  ],
  exports: [featureProcessor("notification"), SilenceSweep, UnansweredSweep, ReopeningSweep],
})
export class AlertsWorkerModule {}
