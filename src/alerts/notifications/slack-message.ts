// A notification as Slack incoming-webhook text: the headline in bold, the summary and figures, and
// Leadgate's link to the alert in Slack's link markup. Everything but that link is text Slack must
// show as written: it carries what comes from leads, connections and errors (a connection's display
// name, a summary, an error code), which must not become Slack markup (`<!channel>` mentions,
// `<https://evil|click>` links), so it is escaped per Slack's rules (escaping-text: &, <, >).
import { bodyLines, headline, type NotificationMessage } from "./notification-message.js";

/** Slack's escaping of text: `&` → `&amp;`, `<` → `&lt;`, `>` → `&gt;` (and nothing else). */
export function slackEscape(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

export function slackText(message: NotificationMessage): string {
  // The last line is the plain-text link ("Alert: <url>"): Slack gets the link markup instead.
  const lines = bodyLines(message).slice(0, -1);
  return [
    `*${slackEscape(headline(message))}*`,
    ...lines.map(slackEscape),
    `<${message.link}|Open the alert>`,
  ].join("\n");
}
