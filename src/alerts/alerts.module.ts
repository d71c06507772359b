import { Module } from "@nestjs/common";
import { AlertBook } from "./alert-book.js";
import { NotificationChannels } from "./notification-channels.repository.js";

/** The alert book and the notification channels (stores: jobs, admin and sweeps use them). */
@Module({ providers: [AlertBook, NotificationChannels], exports: [AlertBook, NotificationChannels] })
export class AlertsModule {}
