import { Module } from "@nestjs/common";
import { OutboundModule } from "../../common/outbound/outbound.module.js";
import { NotificationSender } from "./notification-sender.js";

/** Sending notifications: the worker's notification jobs and the admin API's channel tests. */
@Module({ imports: [OutboundModule], providers: [NotificationSender], exports: [NotificationSender] })
export class NotificationsModule {}
