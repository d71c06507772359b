// A lead's arrival as its lead-upsert records it (api.md "First replies: ... speed to lead"): when
// Leadgate first received it, the provider's time of its first event, and whether it awaits a
// response (the scope of the `lead.unanswered` alert).
import type { LeadArrival } from "../leads/leads.repository.js";
import { hasApi } from "../providers/capabilities.js";
import type { LeadUpdate } from "../providers/provider-follow-up.js";
import type { JobReceipt } from "./job-context.js";

/**
 * Does a lead created by this receipt await a first response? A Yelp or Thumbtack lead (Static
 * Forms has no reply channel) that arrived fresh: by webhook or reconciliation (not a backfill of
 * old leads), no older than `maxAgeSeconds` (RECONCILE_REPLY_MAX_AGE_SECONDS, the age past which
 * it gets no auto-response either) when it arrived; never Thumbtack's test webhook.
 */
export function awaitsResponse(
  receipt: Pick<JobReceipt, "provider" | "source" | "occurredAt" | "receivedAt" | "payload">,
  maxAgeSeconds: number,
): boolean {
  if (!hasApi(receipt.provider)) return false; // Static Forms: no reply channel
  if (receipt.source !== "webhook" && receipt.source !== "reconcile") return false;
  if (receipt.payload?.test === true) return false;
  return receipt.receivedAt.getTime() - receipt.occurredAt.getTime() < maxAgeSeconds * 1000;
}

/**
 * The arrival this receipt tells of. The provider's time is the lead's own where the provider
 * gives it (Yelp's `time_created`), else the event's; never later than the receipt (a time in the
 * future, forged or broken, counts as the moment it arrived).
 */
export function leadArrival(
  receipt: Pick<JobReceipt, "provider" | "source" | "occurredAt" | "receivedAt" | "payload">,
  update: Pick<LeadUpdate, "providerCreatedAt">,
  maxAgeSeconds: number,
): LeadArrival {
  const provided = update.providerCreatedAt ?? receipt.occurredAt;
  return {
    receivedAt: receipt.receivedAt,
    providerCreatedAt: provided > receipt.receivedAt ? receipt.receivedAt : provided,
    awaitsResponse: awaitsResponse(receipt, maxAgeSeconds),
  };
}
