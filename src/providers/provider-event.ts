// The closed vocabularies of ingestion and the normalized event every adapter produces.

export const PROVIDERS = ["staticforms", "thumbtack", "yelp"] as const;
export type Provider = (typeof PROVIDERS)[number];

/** What an event means for the lead. `ignored`: a recognised envelope whose event we do not act on. */
export const EVENT_KINDS = ["lead.created", "lead.updated", "lead.replied", "ignored"] as const;
export type EventKind = (typeof EVENT_KINDS)[number];

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** One provider event, normalized. One delivery may carry several (Yelp `updates[]`). */
export interface ProviderEvent {
  provider: Provider;
  /** The provider account the event belongs to (Static Forms account/form, Thumbtack business, Yelp business). */
  accountId: string;
  /** The provider's own id of the event, when it has one. */
  eventId?: string;
  /** The provider's lead id (Thumbtack negotiationID, Yelp lead_id, Static Forms submission). */
  leadId: string;
  kind: EventKind;
  /** The provider's event type as sent (`NEW_EVENT`, `MessageCreatedV4`, `form.submitted`, ...). */
  providerType: string;
  /**
   * For events without an id: the part of the fallback identity that tells two events of one lead
   * apart and stays constant across retries (providers.md names it per provider).
   */
  version?: string;
  occurredAt: Date;
  /** May this event start a conversation we answer automatically? (never our own messages or test payloads) */
  mayStartConversation: boolean;
  /** The event's business content, without delivery metadata or sender secrets. */
  payload: JsonObject;
}
