// The key of a notification job: `notification:<alert id>.<channel id>.<opened|resolved>`, one per
// channel per alert opening and one per resolution. The notification outbox builds it when an
// alert opens or resolves (notification-outbox.ts); the processor reads it back.
import { jobKey } from "../../jobs/operations.js";

export type AlertTransition = "opened" | "resolved";

export function notificationKey(alertId: string, channelId: string, transition: AlertTransition): string {
  return jobKey("notification", `${alertId}.${channelId}.${transition}`);
}

const UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}";
const KEY = new RegExp(`^notification:(${UUID})\\.(${UUID})\\.(opened|resolved)$`);

export function parseNotificationKey(
  key: string,
): { alertId: string; channelId: string; transition: AlertTransition } | undefined {
  const match = KEY.exec(key);
  if (!match) return undefined;
  return { alertId: match[1]!, channelId: match[2]!, transition: match[3] as AlertTransition };
}
