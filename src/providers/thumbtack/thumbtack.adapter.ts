// Thumbtack: v4 `{event:{eventType,...}, data:{...}}` (negotiations and messages) and the legacy
// flat lead `{leadID, ...}` (providers.md §2). Authenticated by HTTP Basic or a custom header.
import { Injectable, Logger } from "@nestjs/common";
import { canonicalJson, sha256Hex } from "../../common/canonical-json.js";
import { verifyAny } from "../inbound-auth.js";
import type { ConnectionForIngest, InboundDelivery, ProviderAdapter } from "../provider-adapter.js";
import type { JsonObject, ProviderEvent } from "../provider-event.js";
import {
  firstTime,
  invalidEnvelope,
  isObject,
  optionalString,
  requireId,
  requireObject,
  requirePathId,
} from "../envelope.js";

/** Event types matched case-insensitively; the docs' own typo "NegotationCreatedV4" is accepted. */
const NEGOTIATION_TYPES = new Set(["negotiationcreatedv4", "negotationcreatedv4"]);
const MESSAGE_TYPE = "messagecreatedv4";

/** Thumbtack's "test webhook" sends these fixed names; we never answer it automatically. */
function isWebhookTest(data: JsonObject): boolean {
  const business = isObject(data.business) ? data.business : {};
  const customer = isObject(data.customer) ? data.customer : {};
  return (
    business.name === "Test Business for Webhooks" ||
    (customer.firstName === "Test" && customer.lastName === "Customer" && customer.phone === "1234567890")
  );
}

const logger = new Logger("thumbtack");

@Injectable()
export class ThumbtackAdapter implements ProviderAdapter {
  readonly provider = "thumbtack" as const;

  verify(delivery: InboundDelivery, connection: ConnectionForIngest): void {
    verifyAny(connection.credentials, { headers: delivery.headers, query: delivery.query });
  }

  normalize(delivery: InboundDelivery, connection: ConnectionForIngest): ProviderEvent[] {
    const body = requireObject(delivery.body, "The body");
    if (isObject(body.event)) return [this.v4(body, body.event, connection)];
    if (body.leadID !== undefined) return [this.legacy(body, connection)];
    throw invalidEnvelope("Expected a Thumbtack v4 envelope {event, data} or a legacy lead {leadID, ...}.");
  }

  private v4(body: JsonObject, event: JsonObject, connection: ConnectionForIngest): ProviderEvent {
    const eventType = optionalString(event, "eventType", "event.eventType");
    if (eventType === undefined) throw invalidEnvelope("event.eventType must be a string.");
    const data = requireObject(body.data, "data");
    const type = eventType.toLowerCase();
    const base = {
      provider: this.provider,
      accountId: connection.externalAccountId,
      providerType: eventType,
    };

    if (NEGOTIATION_TYPES.has(type)) {
      if (eventType !== "NegotiationCreatedV4")
        logger.warn({ msg: "event type spelled unusually", eventType });
      const negotiationId = requirePathId(data, "negotiationID", "data.negotiationID");
      const test = isWebhookTest(data);
      return {
        ...base,
        eventId: negotiationId,
        leadId: negotiationId,
        kind: "lead.created",
        occurredAt: firstTime(data.createdAt, data.createTime, event.triggeredAt),
        mayStartConversation: !test,
        payload: { eventType, ...data, ...(test ? { test: true } : {}) },
      };
    }
    if (type === MESSAGE_TYPE) {
      const messageId = requireId(data, "messageID", "data.messageID");
      const fromCustomer = data.from === "Customer";
      return {
        ...base,
        eventId: messageId,
        leadId: requirePathId(data, "negotiationID", "data.negotiationID"),
        // Our own (business) messages update the lead but never start an automatic reply.
        kind: fromCustomer ? "lead.replied" : "lead.updated",
        occurredAt: firstTime(data.sentAt, event.triggeredAt),
        mayStartConversation: fromCustomer,
        payload: { eventType, ...data },
      };
    }
    // Reviews, incentives, preset jobs, future types: stored, acknowledged, not acted on.
    const leadId = data.negotiationID ?? data.reviewID ?? data.id;
    return {
      ...base,
      // No documented id: the content identifies the event across retries.
      version: sha256Hex(canonicalJson(data)),
      leadId: typeof leadId === "string" || typeof leadId === "number" ? String(leadId) : "",
      kind: "ignored",
      occurredAt: firstTime(event.triggeredAt),
      mayStartConversation: false,
      payload: { eventType, ...data },
    };
  }

  private legacy(body: JsonObject, connection: ConnectionForIngest): ProviderEvent {
    const leadId = requirePathId(body, "leadID");
    return {
      provider: this.provider,
      accountId: connection.externalAccountId,
      eventId: leadId,
      leadId,
      kind: "lead.created",
      providerType: "LegacyLead",
      occurredAt: firstTime(body.createTimestamp),
      // The v4 messages API does not take legacy lead ids: no automatic reply for this shape.
      mayStartConversation: false,
      payload: body,
    };
  }
}
