// What the worker asks of a provider after an event was accepted: what the event changes on the lead,
// and the first automatic reply. One implementation per provider folder; the processors in jobs/
// reach them through the InboxRegistry and never name a provider.
import type { JsonObject, Provider } from "./provider-event.js";

/** The lead's contact fields (each absent when unknown). */
export interface Contact {
  name?: string;
  /** The first reply's `{{lead.firstName}}` (api.md "First replies"). */
  firstName?: string;
  email?: string;
  phone?: string;
  message?: string;
}

/** One message of the lead's conversation, keyed by the provider's message id. */
export interface LeadMessage {
  externalId: string;
  direction: "inbound" | "outbound";
  author?: string | null;
  text?: string | null;
  sentAt: Date;
  /** The provider's paging cursor of this message, where its list has them (Yelp). */
  cursor?: string;
}

/**
 * A stretch of the provider's message list, oldest first, that continues the stored one: right
 * after the stored message `after`, right before the stored message `before`, or (neither) the
 * newest messages of a lead with none stored in list order yet.
 */
export interface HistoryRun {
  messages: LeadMessage[];
  after?: string;
  before?: string;
}

/** What a run read of a provider's ordered message list; `complete`: back to its first message. */
export interface LeadHistory {
  runs: HistoryRun[];
  complete: boolean;
}

/** A message at one end of the stored list. */
export interface HistoryEnd {
  externalId: string;
  cursor: string;
}

/** The lead's stored list stretch (its oldest and newest messages), for paging on from there. */
export interface StoredHistory {
  oldest: HistoryEnd;
  newest: HistoryEnd;
  /** The stored list goes back to the provider's first message. */
  complete: boolean;
}

/** A phone opt-in (`granted`, with the number) or opt-out, as of the consent event's time. */
export interface PhoneConsent {
  granted: boolean;
  at: Date;
  phone?: string;
}

/** What one event changes on the lead, as data; the caller writes it to the lead store. */
export interface LeadUpdate {
  /**
   * The lead's contact fields and details as of `lastEventAt`. Absent when the event carries none
   * (a Thumbtack message that came before its negotiation): the lead is then only made sure to
   * exist, as a placeholder when it is new.
   */
  profile?: { contact: Contact; details: JsonObject; service?: string };
  /** The time of the data; an older update never overwrites newer data. */
  lastEventAt: Date;
  /** Messages to add (once each, by external id). */
  messages: LeadMessage[];
  /** Messages in the provider's list order, where it has one (these are not also in `messages`). */
  history?: LeadHistory;
  /** A phone consent event: an older one never overrides a newer one. */
  phoneConsent?: PhoneConsent;
  /** The provider's time of the lead's first event, where the lead says it (Yelp's `time_created`). */
  providerCreatedAt?: Date;
  /**
   * The time of the earliest message among these that the business wrote itself (api.md "Who
   * answered": not Leadgate's reply), when there is one: a first response `by: "business"`.
   */
  businessAnsweredAt?: Date;
}

/** The first reply Leadgate sent (or is sending) to the lead: its rendered text, and when it was recorded. */
export interface OurReply {
  text: string;
  at: Date;
}

/** The accepted event a follow-up works from (a stored receipt). */
export interface InboxEvent {
  leadId: string;
  eventId: string | null;
  occurredAt: Date;
  /** The normalized payload; null once retention purged it. */
  payload: JsonObject | null;
}

export interface ReplyRequest {
  leadId: string;
  text: string;
  /** The connection's provider API token, when it has one. */
  token: string | undefined;
  /** An earlier attempt may have sent the reply (it timed out, or its worker died): look before sending. */
  outcomeUnknown: boolean;
}

/**
 * What became of the reply: sent now, found already sent by an earlier attempt (`reconciled`), or
 * not sent, with the reason (stored as the side effect's external ref).
 */
export type ReplyOutcome =
  | { status: "succeeded"; ref?: "reconciled" }
  | { status: "skipped"; ref: "business_already_replied"; answeredAt?: Date }
  | { status: "skipped"; ref: "no_consumer_message" | "no_reply_channel" };

/**
 * A provider's lead and reply rules. Stateless; credentials come in as arguments. Failures are
 * classified errors (src/common/outbound/errors.ts): a provider API answer of the wrong shape is a
 * retryable `provider_bad_response`.
 */
export interface ProviderInbox {
  readonly provider: Provider;
  /**
   * Which steps call the provider with the connection's credentials. Only those wait (`blocked`)
   * while the connection has a credential problem; the others run.
   */
  readonly needsCredentials: { readonly leadUpdate: boolean; readonly reply: boolean };
  /**
   * What the event changes on the lead (fetching from the provider API when the webhook is only a
   * trigger); `stored` reads the lead's stored list stretch, for a provider that pages its history;
   * `ourReply` reads the first reply Leadgate sent, to tell it from the business's own messages.
   */
  leadUpdate(
    event: InboxEvent,
    token: string | undefined,
    stored: () => Promise<StoredHistory | null>,
    ourReply: () => Promise<OurReply | null>,
  ): Promise<LeadUpdate>;
  /** Sends the first automatic reply to the lead, or says why not; never twice for one unknown outcome. */
  reply(request: ReplyRequest): Promise<ReplyOutcome>;
  /**
   * Tells the provider that the business answered the lead outside it (`via`: how), where the
   * provider can be told (capability `marksReplied`). Telling it twice is harmless.
   */
  markReplied?(request: { leadId: string; token: string | undefined; via: string | null }): Promise<void>;
}

/** Is a provider's stored text our reply? Providers may store it with other line endings or surrounding space. */
export function isSameText(stored: string | null | undefined, ours: string): boolean {
  const normal = (text: string) => text.replace(/\r\n/g, "\n").trim();
  return typeof stored === "string" && normal(stored) === normal(ours);
}
