// Yelp: one platform-wide webhook URL `/webhooks/yelp/{token}`; `data.id` (the business) selects the
// connection; `data.updates[]` fans out into one event each. The webhook is only a trigger: the
// lead-upsert job fetches the lead and its events with the connection's API token (providers.md §1).
import { Inject, Injectable } from "@nestjs/common";
import { AppError } from "../../common/app-error.js";
import { canonicalJson, sha256Hex } from "../../common/canonical-json.js";
import { inIpRanges } from "../../config/ip-ranges.js";
import { secretsEqual } from "../../crypto/constant-time.js";
import { unauthorized, verifyAny } from "../inbound-auth.js";
import { YELP_CONFIG, type YelpConfig } from "./yelp.config.js";
import type {
  ConnectionForIngest,
  InboundDelivery,
  PlatformWebhook,
  ProviderAdapter,
} from "../provider-adapter.js";
import type { JsonObject, ProviderEvent } from "../provider-event.js";
import {
  firstTime,
  invalidEnvelope,
  optionalString,
  requireId,
  requireObject,
  requirePathId,
} from "../envelope.js";

const NEW_EVENT = "NEW_EVENT";
const PHONE_EVENTS = new Set([
  "CONSUMER_PHONE_NUMBER_OPT_IN_EVENT",
  "CONSUMER_PHONE_NUMBER_OPT_OUT_EVENT",
  "CONSUMER_PHONE_NUMBER_AVAILABLE_EVENT",
]);
const MAX_UPDATES = 100;
const VERIFICATION = /^[A-Za-z0-9]{1,256}$/;

@Injectable()
export class YelpAdapter implements ProviderAdapter, PlatformWebhook {
  readonly provider = "yelp" as const;
  /** One URL for every connection (`/webhooks/yelp/{token}`): this adapter checks it. */
  readonly platform: PlatformWebhook = this;

  constructor(@Inject(YELP_CONFIG) private readonly config: YelpConfig) {}

  /**
   * Platform-level sender check: the URL token (constant time) and the optional IP allowlist.
   * During a rotation the previous token is accepted exactly as the current one; both are always
   * compared, so the answer's timing says nothing about which one (if either) matched.
   */
  verifyPlatform(token: string, ip: string): void {
    const { webhookToken: current, webhookTokenPrevious: previous } = this.config;
    const currentOk = current !== undefined && secretsEqual(token, current);
    const previousOk = previous !== undefined && secretsEqual(token, previous);
    const tokenOk = currentOk || previousOk;
    const allowed = this.config.allowedIps;
    const ipOk = allowed.length === 0 || inIpRanges(ip, allowed);
    if (!tokenOk || !ipOk) throw unauthorized();
  }

  /** The GET handshake: `verification` echoed back. */
  handshake(query: Record<string, unknown>): { verification: string } {
    return { verification: this.verification(query.verification) };
  }

  /** The GET handshake's echo value, checked against api.md's pattern. */
  verification(value: unknown): string {
    if (typeof value !== "string" || !VERIFICATION.test(value)) {
      throw new AppError(400, "invalid_verification", "verification must be 1 to 256 letters or digits.");
    }
    return value;
  }

  /** The business id that routes the delivery to its connection. */
  accountIdOf(delivery: InboundDelivery): string {
    const body = requireObject(delivery.body, "The body");
    return requireId(requireObject(body.data, "data"), "id", "data.id");
  }

  verify(delivery: InboundDelivery, connection: ConnectionForIngest): void {
    verifyAny(connection.credentials, { headers: delivery.headers, query: delivery.query });
  }

  normalize(delivery: InboundDelivery, connection: ConnectionForIngest): ProviderEvent[] {
    const body = requireObject(delivery.body, "The body");
    const data = requireObject(body.data, "data");
    const time = optionalString(body, "time");
    const updates = data.updates;
    if (!Array.isArray(updates) || updates.length === 0 || updates.length > MAX_UPDATES) {
      throw invalidEnvelope(`data.updates must be an array of 1 to ${MAX_UPDATES} updates.`);
    }
    return updates.map((update, index) =>
      this.event(requireObject(update, `data.updates[${index}]`), index, time, connection),
    );
  }

  private event(
    update: JsonObject,
    index: number,
    time: string | undefined,
    connection: ConnectionForIngest,
  ): ProviderEvent {
    const where = `data.updates[${index}]`;
    const eventType = optionalString(update, "event_type", `${where}.event_type`);
    if (eventType === undefined) throw invalidEnvelope(`${where}.event_type must be a string.`);
    const leadId = requirePathId(update, "lead_id", `${where}.lead_id`);
    const base = {
      provider: this.provider,
      accountId: connection.externalAccountId,
      leadId,
      providerType: eventType,
    };
    if (eventType === NEW_EVENT) {
      return {
        ...base,
        // Yelp's processing `time` is delivery metadata here: a retry must digest the same.
        payload: update,
        eventId: requireId(update, "event_id", `${where}.event_id`),
        kind: "lead.updated", // the worker learns from the fetched lead whether it is new
        occurredAt: firstTime(update.interaction_time, time),
        // Whether the business already wrote (BIZ / API-SELF) is only known after the fetch: the job checks.
        mayStartConversation: true,
      };
    }
    // Phone events and unknown types carry no event id: [lead-event, lead_id, event_type, time].
    // Assumption (providers.md): Yelp's `time` stays the same across retries of one notification.
    return {
      ...base,
      payload: { ...update, ...(time === undefined ? {} : { time }) },
      version: time ?? sha256Hex(canonicalJson(update)),
      kind: PHONE_EVENTS.has(eventType) ? "lead.updated" : "ignored",
      occurredAt: firstTime(time),
      mayStartConversation: false,
    };
  }
}
