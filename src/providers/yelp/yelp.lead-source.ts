// Yelp's leads for reconciliation and backfill: the business's lead ids (providers.md, "Provider
// endpoints Leadgate calls"), and for a lead the NEW_EVENT webhooks its events would have sent.
import { Injectable } from "@nestjs/common";
import type { LeadPage, LeadSource, ListedLead, SourceAccount } from "../lead-source.js";
import { pulledDelivery } from "../lead-source.js";
import type { ProviderEvent } from "../provider-event.js";
import { YelpAdapter } from "./yelp.adapter.js";
import { YelpClient } from "./yelp.client.js";

@Injectable()
export class YelpLeadSource implements LeadSource {
  readonly provider = "yelp" as const;

  constructor(
    private readonly client: YelpClient,
    private readonly adapter: YelpAdapter,
  ) {}

  async page(account: SourceAccount, cursor: number): Promise<LeadPage> {
    const answer = await this.client.listLeadIds(account.token, account.externalAccountId, cursor);
    const leads = answer.lead_ids
      .filter((id): id is string | number => typeof id === "string" || typeof id === "number")
      .map((id): ListedLead => ({ leadId: String(id) }));
    return answer.has_more === true && leads.length > 0
      ? { leads, next: cursor + answer.lead_ids.length }
      : { leads };
  }

  /**
   * [ASSUMPTION, fixtures] An event's `id` in the events list is the `event_id` of the NEW_EVENT
   * webhook Yelp sent for it, and its `time_created` that webhook's `interaction_time`: the update
   * built here is the webhook's, so the key and the payload digest are too. The lead's newest page
   * of events (20) is read; a missed lead with more events gets the newest 20.
   */
  async events(account: SourceAccount, lead: ListedLead): Promise<ProviderEvent[]> {
    const events = await this.client.getEvents(account.token, lead.leadId);
    if (events.length === 0) return [];
    const updates = events.map((event) => ({
      event_type: "NEW_EVENT",
      event_id: event.id,
      lead_id: lead.leadId,
      ...(event.time_created ? { interaction_time: event.time_created } : {}),
    }));
    const body = {
      object: "business",
      data: { id: account.externalAccountId, updates },
    };
    return this.adapter.normalize(pulledDelivery(body), {
      id: "",
      externalAccountId: account.externalAccountId,
      credentials: [],
    });
  }
}
