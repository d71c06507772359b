// What a notification says, the same for every channel: a headline, the alert's summary and
// figures, and a link to the alert in the admin API. Never a secret: names, ids, codes and counts.
import type { AlertView, NotificationTransition } from "../alert-types.js";

export interface NotificationMessage {
  transition: NotificationTransition;
  alert: AlertView;
  /** The display name of the alert's connection, when it has one. */
  connectionName: string | null;
  /** `<PUBLIC_BASE_URL>/admin/alerts/<id>`. */
  link: string;
}

export function headline({ transition, alert }: NotificationMessage): string {
  if (transition === "test") return "Leadgate test notification";
  return `[Leadgate] ${transition === "opened" ? "Alert" : "Resolved"}: ${alert.type}`;
}

/** The readable body: summary, connection, figures, link (plain text: email, and Slack's fallback). */
export function bodyLines(message: NotificationMessage): string[] {
  const { alert, transition } = message;
  if (transition === "test") {
    return ["This channel works: Leadgate will send alerts here.", `Alerts: ${message.link}`];
  }
  return [
    alert.summary,
    ...(message.connectionName !== null
      ? [`Connection: ${message.connectionName} (${alert.connectionId})`]
      : []),
    ...(alert.operation !== null ? [`Operation: ${alert.operation}`] : []),
    ...(alert.errorCode !== null ? [`Error: ${alert.errorCode}`] : []),
    `Seen ${alert.count} time${alert.count === 1 ? "" : "s"}, first ${alert.firstSeenAt.toISOString()}, last ${alert.lastSeenAt.toISOString()}`,
    ...(transition === "resolved" && alert.resolvedAt ? [`Resolved ${alert.resolvedAt.toISOString()}`] : []),
    `Alert: ${message.link}`,
  ];
}

/** A test notification's stand-in alert (no alert exists for it). */
export function testAlert(tenantId: string | null): AlertView {
  const now = new Date();
  return {
    id: "00000000-0000-0000-0000-000000000000",
    tenantId: tenantId ?? "",
    type: "job.dead",
    status: "open",
    connectionId: null,
    operation: null,
    errorCode: null,
    count: 0,
    firstSeenAt: now,
    lastSeenAt: now,
    acknowledgedAt: null,
    resolvedAt: null,
    summary: "Test notification",
  };
}
