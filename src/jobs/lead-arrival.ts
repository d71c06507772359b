// A lead's arrival as its lead-upsert records it (api.md "First replies: ... speed to lead"): when
// Leadgate first received it, the provider's time of its first event, and whether it awaits a
// response (the scope of the `lead.unanswered` alert).
import type { LeadArrival } from "../leads/leads.repository.js";
import { hasApi } from "../providers/capabilities.js";
import type { LeadMessage, LeadUpdate } from "../providers/provider-inbox.js";
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
  return {
    receivedAt: receipt.receivedAt,
    providerCreatedAt: clampedTime(update.providerCreatedAt ?? receipt.occurredAt, receipt.receivedAt),
    awaitsResponse: awaitsResponse(receipt, maxAgeSeconds),
  };
}

/** How far before its receipt a provider's time may be stored (api.md "First replies": 400 days). */
export const OLDEST_PROVIDER_TIME_DAYS = 400;

/**
 * A provider's time as stored (api.md "First replies"): no later than Leadgate's receipt of it, no
 * earlier than 400 days before. A forged or broken time (in the future, or 1970) can then neither
 * keep a row past retention nor make a count span decades.
 */
export function clampedTime(time: Date, receivedAt: Date): Date {
  const oldest = receivedAt.getTime() - OLDEST_PROVIDER_TIME_DAYS * 86_400_000;
  const t = Math.min(Math.max(time.getTime(), oldest), receivedAt.getTime());
  return t === time.getTime() ? time : new Date(t);
}

/** The update with every provider time in it clamped (clampedTime) to its receipt's. */
export function clampedUpdate(update: LeadUpdate, receivedAt: Date): LeadUpdate {
  const clamp = (t: Date) => clampedTime(t, receivedAt);
  const messages = (list: LeadMessage[]) => list.map((m) => ({ ...m, sentAt: clamp(m.sentAt) }));
  return {
    ...update,
    lastEventAt: clamp(update.lastEventAt),
    messages: messages(update.messages),
    ...(update.history && {
      history: {
        ...update.history,
        runs: update.history.runs.map((r) => ({ ...r, messages: messages(r.messages) })),
      },
    }),
    ...(update.phoneConsent && {
      phoneConsent: { ...update.phoneConsent, at: clamp(update.phoneConsent.at) },
    }),
    ...(update.providerCreatedAt && { providerCreatedAt: clamp(update.providerCreatedAt) }),
    ...(update.businessAnsweredAt && { businessAnsweredAt: clamp(update.businessAnsweredAt) }),
  };
}
