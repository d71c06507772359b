// The scoped idempotency key of docs/design.md and the payload digest.
import { canonicalJson, sha256Hex } from "../common/canonical-json.js";
import type { ProviderEvent } from "../providers/provider-event.js";

/**
 * The identity tuple of an event: with a provider event id `[provider, accountId, "provider-event", eventId]`,
 * else `[provider, accountId, "lead-event", leadId, providerType, version]`. Never a delivery
 * timestamp, request id or retry counter.
 */
export function identityOf(event: ProviderEvent): string[] {
  const scope = [event.provider, event.accountId];
  return event.eventId !== undefined
    ? [...scope, "provider-event", event.eventId]
    : [...scope, "lead-event", event.leadId, event.providerType, event.version ?? ""];
}

/**
 * sha256 (hex) of the identity tuple encoded as a JSON array: an unambiguous encoding, so
 * `["a:b","c"]` and `["a","b:c"]` give different keys.
 */
export function idempotencyKey(event: ProviderEvent): string {
  return sha256Hex(JSON.stringify(identityOf(event)));
}

/**
 * sha256 of the normalized event (canonical JSON), not of the raw bytes: a byte-different retry
 * of the same event (reordered keys, other whitespace, another delivery timestamp) digests the same.
 */
export function payloadDigest(event: ProviderEvent): string {
  const { provider, accountId, eventId, leadId, kind, payload } = event;
  // Keys in sorted order, so only the payload's objects may need a sorted copy (canonicalJson).
  return sha256Hex(canonicalJson({ accountId, eventId: eventId ?? null, kind, leadId, payload, provider }));
}

export { leadScopeKey } from "../jobs/operations.js";
