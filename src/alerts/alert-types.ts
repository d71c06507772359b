// The closed vocabularies of alerts and notification channels (api.md "Alerts and notification
// channels"); the migration's CHECK constraints list the same values.
import { ApiProperty } from "@nestjs/swagger";
import { NullableDate, NullableId, NullableString } from "../common/api-properties.js";

export const ALERT_TYPES = [
  "connection.reauthorization_required",
  "connection.credential_error",
  "job.dead",
  "registration.error",
  "webhooks.missing",
  "connection.silent",
  "destination.failing",
  "payload.conflict",
  "lead.unanswered",
] as const;
export type AlertType = (typeof ALERT_TYPES)[number];

export const ALERT_STATUSES = ["open", "acknowledged", "resolved"] as const;
export type AlertStatus = (typeof ALERT_STATUSES)[number];

export const CHANNEL_TYPES = ["webhook", "slack", "email"] as const;
export type ChannelType = (typeof CHANNEL_TYPES)[number];

/** What a notification tells: an alert opened or resolved, or a channel's test. */
export type NotificationTransition = "opened" | "resolved" | "test";

/** An alert as the admin API and the notifications show it. */
export class AlertView {
  @ApiProperty({ format: "uuid" })
  id!: string;

  @ApiProperty({ format: "uuid" })
  tenantId!: string;

  @ApiProperty({ enum: ALERT_TYPES })
  type!: AlertType;

  @ApiProperty({ enum: ALERT_STATUSES })
  status!: AlertStatus;

  @NullableId()
  connectionId!: string | null;

  @NullableString()
  operation!: string | null;

  @NullableString()
  errorCode!: string | null;

  @ApiProperty({ description: "occurrences since it opened" })
  count!: number;

  @ApiProperty()
  firstSeenAt!: Date;

  @ApiProperty()
  lastSeenAt!: Date;

  @NullableDate()
  acknowledgedAt!: Date | null;

  @NullableDate()
  resolvedAt!: Date | null;

  @ApiProperty({ description: "readable, for people" })
  summary!: string;
}
