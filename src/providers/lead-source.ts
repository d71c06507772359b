// What reconciliation and backfill read from a provider: its list of an account's leads, and for a
// lead the events its webhooks would have carried, normalized by the provider's own adapter from
// the body such a webhook would have had, so every key, digest and job is what the webhook makes.
import type { Provider, ProviderEvent } from "./provider-event.js";

/** One lead of a provider's list. */
export interface ListedLead {
  leadId: string;
  /** When the list says (Thumbtack); otherwise learnt from the lead's events. */
  createdAt?: Date;
  /** The lead's events when the list carries them whole (Thumbtack); otherwise read by `events`. */
  events?: ProviderEvent[];
}

export interface LeadPage {
  /** Newest first. */
  leads: ListedLead[];
  /** Where the next page starts; undefined: this was the last. */
  next?: number;
}

/** The account a source reads, with the connection's API token. */
export interface SourceAccount {
  externalAccountId: string;
  token: string | undefined;
}

/** The provider offers no list of leads (Static Forms), or its assumed endpoint answered 404. */
export class ListingUnavailable extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

export interface LeadSource {
  readonly provider: Provider;
  /**
   * One page of the account's leads, newest first, from `cursor` (0: the first page); `since` is a
   * hint (a source that can filter by time may leave older leads out).
   */
  page(account: SourceAccount, cursor: number, since: Date): Promise<LeadPage>;
  /** The events of a listed lead as its webhooks would have delivered them (oldest first). */
  events(account: SourceAccount, lead: ListedLead): Promise<ProviderEvent[]>;
}

/** Static Forms has no API: reconciliation and backfill are manual. */
export class NoLeadSource implements LeadSource {
  readonly provider = "staticforms" as const;

  page(): Promise<LeadPage> {
    return Promise.reject(new ListingUnavailable("no_provider_api"));
  }

  events(): Promise<ProviderEvent[]> {
    return Promise.reject(new ListingUnavailable("no_provider_api"));
  }
}

/** A delivery body built by a source: what the adapter normalizes (no sender to verify: the API call was ours). */
export function pulledDelivery(body: unknown) {
  return { rawBody: Buffer.alloc(0), body, headers: {}, query: {}, ip: "" };
}
