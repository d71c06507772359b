// The closed vocabularies of alerts and notification channels (api.md "Alerts and notification
// channels"); the migration's CHECK constraints list the same values.

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
export interface AlertView {
  id: string;
  tenantId: string;
  type: AlertType;
  status: AlertStatus;
  connectionId: string | null;
  operation: string | null;
  errorCode: string | null;
  count: number;
  firstSeenAt: Date;
  lastSeenAt: Date;
  acknowledgedAt: Date | null;
  resolvedAt: Date | null;
  summary: string;
}
