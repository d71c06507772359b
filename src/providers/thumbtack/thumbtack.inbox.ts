// Thumbtack after ingest: the webhook carries the lead (negotiation) or one message; the reply is a
// message on the negotiation, sent only when the business has not written there yet (and looked for
// first when an earlier attempt's outcome is unknown).
import { Injectable } from "@nestjs/common";
import { PermanentError } from "../../common/outbound/errors.js";
import { firstWord, objectOrEmpty, parseTime, trimmedText } from "../envelope.js";
import type { JsonObject } from "../provider-event.js";
import {
  type Contact,
  type InboxEvent,
  isSameText,
  type LeadUpdate,
  type OurReply,
  type ProviderInbox,
  type ReplyOutcome,
  type ReplyRequest,
} from "../provider-inbox.js";
import { ThumbtackClient } from "./thumbtack.client.js";
import type { ThumbtackMessage } from "./thumbtack.schemas.js";

/** Negotiation fields kept on the lead as details. */
const DETAIL_FIELDS = ["request", "category", "estimate", "leadPrice", "status", "test"];

/**
 * Did the business write this message itself (api.md "Who answered")? Every message from
 * `Business` but the one Leadgate posted (`ours`, by its text), Thumbtack's automatic quick reply
 * included: the customer was answered.
 */
export function isBusinessOwn(message: ThumbtackMessage, ours: OurReply | null): boolean {
  return message.from === "Business" && !(ours && isSameText(message.text, ours.text));
}

/**
 * A `MessageCreatedV4` adds its message (the lead may not be known yet: a message can arrive before
 * its negotiation, so the lead is only made sure to exist, as a placeholder filled later); a
 * negotiation (or legacy lead) carries the customer's contact and the request. `ours`: the first
 * reply Leadgate sent, which tells the business's own messages from it.
 */
export function thumbtackLeadUpdate(event: InboxEvent, ours: OurReply | null = null): LeadUpdate {
  const { payload, occurredAt } = event;
  if (!payload) throw new PermanentError("payload_purged"); // retention keeps it while a job needs it
  const messageId = payload.messageID;
  if (typeof messageId === "string" || typeof messageId === "number") {
    const fromCustomer = payload.from === "Customer";
    const author = objectOrEmpty(fromCustomer ? payload.customer : payload.business).displayName;
    const text = typeof payload.text === "string" ? payload.text : null;
    const business = isBusinessOwn(
      { from: typeof payload.from === "string" ? payload.from : null, text },
      ours,
    );
    return {
      lastEventAt: occurredAt,
      ...(business ? { businessAnsweredAt: occurredAt } : {}),
      messages: [
        {
          externalId: String(messageId),
          direction: fromCustomer ? "inbound" : "outbound",
          author: trimmedText(author) ?? null,
          text: trimmedText(payload.text) ?? null,
          sentAt: occurredAt,
        },
      ],
    };
  }
  const customer = objectOrEmpty(payload.customer);
  const contact: Contact = {};
  // api.md "First replies": the name is firstName + lastName; older shapes give a display name or a name.
  const name =
    [trimmedText(customer.firstName), trimmedText(customer.lastName)].filter(Boolean).join(" ") ||
    trimmedText(customer.displayName) ||
    trimmedText(customer.name);
  if (name) contact.name = name;
  const firstName = trimmedText(customer.firstName) ?? firstWord(name);
  if (firstName) contact.firstName = firstName;
  const phone = trimmedText(customer.phone);
  if (phone) contact.phone = phone;
  const details: JsonObject = {};
  for (const field of DETAIL_FIELDS) {
    if (payload[field] !== undefined) details[field] = payload[field];
  }
  const service = thumbtackService(payload);
  return {
    profile: { contact, details, ...(service ? { service } : {}) },
    lastEventAt: occurredAt,
    messages: [],
  };
}

/**
 * The service asked for: the v4 request's category name, the category's name (a variant of the
 * docs), or the legacy request's category string.
 */
function thumbtackService(payload: JsonObject): string | undefined {
  const request = objectOrEmpty(payload.request);
  return (
    trimmedText(objectOrEmpty(request.category).name) ??
    trimmedText(objectOrEmpty(payload.category).name) ??
    trimmedText(request.category)
  );
}

/** Is our reply among the negotiation's messages? */
export function thumbtackHasOurReply(messages: ThumbtackMessage[], text: string): boolean {
  return messages.some((message) => message.from === "Business" && isSameText(message.text, text));
}

/**
 * The first reply, decided on the negotiation's messages: `reconciled` when an earlier attempt
 * whose outcome is unknown did send it; `business_already_replied` when the pro (or Thumbtack's
 * automatic quick reply, which is sent as the business) already wrote: a second greeting would
 * double theirs; else `send`.
 */
export function thumbtackReplyDecision(
  messages: ThumbtackMessage[],
  text: string,
  outcomeUnknown: boolean,
): "send" | "reconciled" | "business_already_replied" {
  if (outcomeUnknown && thumbtackHasOurReply(messages, text)) return "reconciled";
  return messages.some((message) => message.from === "Business") ? "business_already_replied" : "send";
}

/** The earliest `sentAt` among the messages (those that have one). */
function earliestSent(messages: ThumbtackMessage[]): Date | undefined {
  const times = messages.map((message) => parseTime(message.sentAt)).filter((at) => at !== undefined);
  return times.length > 0 ? new Date(Math.min(...times.map((at) => at.getTime()))) : undefined;
}

@Injectable()
export class ThumbtackInbox implements ProviderInbox {
  readonly provider = "thumbtack" as const;
  /** The webhook carries the lead; the reply is a call with the token. */
  readonly needsCredentials = { leadUpdate: false, reply: true };

  constructor(private readonly client: ThumbtackClient) {}

  async leadUpdate(
    event: InboxEvent,
    _token: string | undefined,
    _stored: unknown,
    ourReply: () => Promise<OurReply | null>,
  ): Promise<LeadUpdate> {
    // Our reply is read only for a message from the business, to tell it from ours.
    const fromBusiness = event.payload?.messageID != null && event.payload.from === "Business";
    return thumbtackLeadUpdate(event, fromBusiness ? await ourReply() : null);
  }

  async reply({ leadId, text, token, outcomeUnknown }: ReplyRequest): Promise<ReplyOutcome> {
    const messages = await this.client.getMessages(token, leadId);
    switch (thumbtackReplyDecision(messages, text, outcomeUnknown)) {
      case "reconciled":
        return { status: "succeeded", ref: "reconciled" };
      case "business_already_replied": {
        const answeredAt = earliestSent(messages.filter((message) => message.from === "Business"));
        return { status: "skipped", ref: "business_already_replied", ...(answeredAt ? { answeredAt } : {}) };
      }
      case "send":
        await this.client.postMessage(token, leadId, text);
        return { status: "succeeded" };
    }
  }
}
