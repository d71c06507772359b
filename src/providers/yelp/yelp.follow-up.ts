// Yelp after ingest: the webhook is only a trigger, so the lead and its events are fetched with the
// connection's token; the reply is a TEXT event, never sent when the newest event is our own.
import { Injectable } from "@nestjs/common";
import { firstTime, trimmedText } from "../envelope.js";
import type { JsonObject } from "../provider-event.js";
import {
  type Contact,
  type FollowUpEvent,
  isSameText,
  type LeadUpdate,
  type ProviderFollowUp,
  type ReplyOutcome,
  type ReplyRequest,
} from "../provider-follow-up.js";
import { YelpClient } from "./yelp.client.js";
import type { YelpEvent, YelpLead } from "./yelp.schemas.js";

/** Lead fields kept on the lead as details. */
const DETAIL_FIELDS = [
  "conversation_id",
  "project",
  "time_created",
  "temporary_email_address_expiry",
] as const;

/** Sent by the business: by us through the API (`API-SELF`), or by a person at the business (`BIZ`). */
export const isOurs = (event: YelpEvent): boolean =>
  event.user_type === "BIZ" || event.channel === "API-SELF";
const textOf = (event: YelpEvent) => event.event_content?.text ?? event.event_content?.fallback_text;

/** The fetched lead and its events, as of the lead's last event (else the webhook's time). */
export function yelpLeadUpdate(lead: YelpLead, events: YelpEvent[], occurredAt: Date): LeadUpdate {
  const fallback = occurredAt.toISOString();
  const contact: Contact = {};
  const name = trimmedText(lead.user?.display_name);
  const email = trimmedText(lead.temporary_email_address);
  const phone = trimmedText(lead.phone_number) ?? trimmedText(lead.temporary_phone_number);
  if (name) contact.name = name;
  if (email) contact.email = email;
  if (phone) contact.phone = phone;
  const details: JsonObject = {};
  for (const field of DETAIL_FIELDS) {
    const value = lead[field];
    if (value !== undefined) details[field] = value;
  }
  return {
    profile: { contact, details },
    lastEventAt: firstTime(lead.last_event_time, fallback),
    messages: events.map((event) => ({
      externalId: event.id,
      direction: event.user_type === "BIZ" ? "outbound" : "inbound",
      author: event.user_display_name ?? null,
      text: textOf(event) ?? null,
      sentAt: firstTime(event.time_created, fallback),
    })),
  };
}

/**
 * Whether to send the reply, given the lead's events: `reconciled` when an earlier attempt whose
 * outcome is unknown did send it; `latest_event_is_ours` when the newest event is ours (answering it
 * is how auto-responders loop) or there is none; else `send`.
 */
export function yelpReplyDecision(
  events: YelpEvent[],
  text: string,
  outcomeUnknown: boolean,
): "send" | "reconciled" | "latest_event_is_ours" {
  if (outcomeUnknown && events.some((event) => isOurs(event) && isSameText(textOf(event), text))) {
    return "reconciled";
  }
  const newest = [...events].sort((a, b) => (b.time_created ?? "").localeCompare(a.time_created ?? ""))[0];
  return !newest || isOurs(newest) ? "latest_event_is_ours" : "send";
}

@Injectable()
export class YelpFollowUp implements ProviderFollowUp {
  readonly provider = "yelp" as const;
  /** The webhook is only a trigger: the lead is fetched with the token, and the reply sent with it. */
  readonly needsCredentials = { leadUpdate: true, reply: true };

  constructor(private readonly client: YelpClient) {}

  async leadUpdate(event: FollowUpEvent, token: string | undefined): Promise<LeadUpdate> {
    const [lead, events] = await Promise.all([
      this.client.getLead(token, event.leadId),
      this.client.getEvents(token, event.leadId),
    ]);
    return yelpLeadUpdate(lead, events, event.occurredAt);
  }

  async reply({ leadId, text, token, outcomeUnknown }: ReplyRequest): Promise<ReplyOutcome> {
    const decision = yelpReplyDecision(await this.client.getEvents(token, leadId), text, outcomeUnknown);
    switch (decision) {
      case "reconciled":
        return { status: "succeeded", ref: "reconciled" };
      case "latest_event_is_ours":
        return { status: "skipped", ref: "latest_event_is_ours" };
      case "send":
        await this.client.postText(token, leadId, text);
        return { status: "succeeded" };
    }
  }
}
