// A notification as Slack incoming-webhook text: the headline in bold, the summary and figures, and
// Leadgate's link to the alert in Slack's link markup.
import { bodyLines, headline, type NotificationMessage } from "./notification-message.js";

export function slackText(message: NotificationMessage): string {
  const [summary, ...rest] = bodyLines(message);
  return [`*${headline(message)}*`, summary, ...rest.slice(0, -1), `<${message.link}|Open the alert>`].join(
    "\n",
  );
}
