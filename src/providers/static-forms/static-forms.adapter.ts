// Static Forms: a form submission becomes one `lead.created` event.
// Two envelopes (providers.md §3): the current `{event, timestamp, data:{submissionId, formData, apiKey, ...}}`
// and the legacy flat `{apiKey, submittedAt, formData, ...}` (identified by a hash of its content).
import { Injectable } from "@nestjs/common";
import { AppError } from "../../common/app-error.js";
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
} from "../envelope.js";

const SUBMITTED = "form.submitted";

/** The sender's API key travels in the body; it is read (as a string, or nothing) only to verify it. */
function bodyApiKey(body: unknown): string | undefined {
  if (!isObject(body)) return undefined;
  const holder = isObject(body.data) ? body.data : body;
  return typeof holder.apiKey === "string" ? holder.apiKey : undefined;
}

/** `Idempotency-Key` as an RFC 8941 sf-string or bare: surrounding quotes stripped. */
function idempotencyHeader(delivery: InboundDelivery): string | undefined {
  const value = delivery.headers["idempotency-key"];
  if (value === undefined) return undefined;
  const text = Array.isArray(value) ? value.join(",") : value.trim();
  return text.length >= 2 && text.startsWith('"') && text.endsWith('"') ? text.slice(1, -1) : text;
}

function withoutApiKey(object: JsonObject): JsonObject {
  const { apiKey: _secret, ...rest } = object;
  return rest;
}

@Injectable()
export class StaticFormsAdapter implements ProviderAdapter {
  readonly provider = "staticforms" as const;

  verify(delivery: InboundDelivery, connection: ConnectionForIngest): void {
    verifyAny(connection.credentials, {
      headers: delivery.headers,
      query: delivery.query,
      bodyApiKey: bodyApiKey(delivery.body),
    });
  }

  normalize(delivery: InboundDelivery, connection: ConnectionForIngest): ProviderEvent[] {
    const body = requireObject(delivery.body, "The body");
    return [
      body.event !== undefined || body.data !== undefined
        ? this.current(body, delivery, connection)
        : this.legacy(body, connection),
    ];
  }

  private current(
    body: JsonObject,
    delivery: InboundDelivery,
    connection: ConnectionForIngest,
  ): ProviderEvent {
    const event = optionalString(body, "event");
    if (event === undefined) throw invalidEnvelope('event must be a string such as "form.submitted".');
    const data = requireObject(body.data, "data");
    const submissionId = requireId(data, "submissionId", "data.submissionId");
    const header = idempotencyHeader(delivery);
    if (header !== undefined && header !== `staticforms:${event}:${submissionId}`) {
      throw new AppError(
        400,
        "idempotency_key_mismatch",
        `The Idempotency-Key header must be "staticforms:${event}:<data.submissionId>" for this body.`,
      );
    }
    const known = event === SUBMITTED;
    if (known) requireObject(data.formData, "data.formData");
    return {
      provider: this.provider,
      accountId: connection.externalAccountId,
      // Another event type about the same submission is another event.
      eventId: known ? submissionId : `${event}/${submissionId}`,
      leadId: submissionId,
      kind: known ? "lead.created" : "ignored",
      providerType: event,
      occurredAt: firstTime(body.timestamp),
      mayStartConversation: false, // Static Forms has no reply channel
      payload: { event, ...withoutApiKey(data) },
    };
  }

  private legacy(body: JsonObject, connection: ConnectionForIngest): ProviderEvent {
    requireObject(body.formData, "formData");
    const payload = withoutApiKey(body);
    const contentId = sha256Hex(canonicalJson(payload));
    return {
      provider: this.provider,
      accountId: connection.externalAccountId,
      eventId: `legacy-${contentId}`,
      leadId: `legacy-${contentId}`,
      kind: "lead.created",
      providerType: SUBMITTED,
      occurredAt: firstTime(body.submittedAt),
      mayStartConversation: false,
      payload: { event: SUBMITTED, ...payload },
    };
  }
}
