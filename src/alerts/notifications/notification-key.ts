// The key of a notification job: `notification:<alert id>.<channel id>.<opened|resolved>` for the
// alert's first opening and its resolution, `…<opened|resolved>.<n>` for its n-th opening (an alert
// re-opens when its condition returns within 10 minutes of its resolution) and the resolution after
// it: at most one of each per channel per opening. The notification outbox builds it when it tells
// a channel (notification-outbox.ts); the processor reads it back.
import { jobKey } from "../../jobs/operations.js";

export type AlertTransition = "opened" | "resolved";

export function notificationKey(
  alertId: string,
  channelId: string,
  transition: AlertTransition,
  opening = 1,
): string {
  return jobKey("notification", `${alertId}.${channelId}.${transition}${opening > 1 ? `.${opening}` : ""}`);
}

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const KEY = new RegExp(`^notification:(${UUID})\\.(${UUID})\\.(opened|resolved)(?:\\.([1-9][0-9]*))?$`);

export function parseNotificationKey(
  key: string,
): { alertId: string; channelId: string; transition: AlertTransition; opening: number } | undefined {
  const match = KEY.exec(key);
  if (!match) return undefined;
  return {
    alertId: match[1]!,
    channelId: match[2]!,
    transition: match[3] as AlertTransition,
    opening: match[4] === undefined ? 1 : Number(match[4]),
  };
}
