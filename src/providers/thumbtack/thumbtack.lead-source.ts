// Thumbtack's leads for reconciliation and backfill: the business's negotiations on the assumed
// endpoint (providers.md: [ASSUMPTION], THUMBTACK_NEGOTIATIONS_PATH; a 404 makes reconciliation
// manual), each normalized as the NegotiationCreatedV4 webhook that carries it.
import { Injectable } from "@nestjs/common";
import { PermanentError } from "../../common/outbound/errors.js";
import { isObject } from "../envelope.js";
import type { LeadPage, LeadSource, ListedLead, SourceAccount } from "../lead-source.js";
import { ListingUnavailable, pulledDelivery } from "../lead-source.js";
import type { ProviderEvent } from "../provider-event.js";
import { ThumbtackAdapter } from "./thumbtack.adapter.js";
import { ThumbtackClient } from "./thumbtack.client.js";

@Injectable()
export class ThumbtackLeadSource implements LeadSource {
  readonly provider = "thumbtack" as const;

  constructor(
    private readonly client: ThumbtackClient,
    private readonly adapter: ThumbtackAdapter,
  ) {}

  /**
   * One page: the negotiations created since `since` (the endpoint's limit is 50; a full page of
   * a window that busy is read again by the next run, whose known keys are skipped).
   */
  async page(account: SourceAccount, _cursor: number, since: Date): Promise<LeadPage> {
    let items: unknown[];
    try {
      items = await this.client.listNegotiations(account.token, account.externalAccountId, since);
    } catch (error) {
      if (error instanceof PermanentError && error.code === "http_404")
        throw new ListingUnavailable("negotiations_endpoint_not_found");
      throw error;
    }
    const leads = items.filter(isObject).map((negotiation): ListedLead => {
      // The NegotiationCreatedV4 webhook's envelope around the negotiation: `negotiationID` is the
      // webhook's event id, so the key is the webhook's; the payload is the same when the list
      // item has the webhook's `data` shape.
      const body = { event: { eventType: "NegotiationCreatedV4" }, data: negotiation };
      const [event] = this.adapter.normalize(pulledDelivery(body), {
        id: "",
        externalAccountId: account.externalAccountId,
        credentials: [],
      });
      return { leadId: event!.leadId, createdAt: event!.occurredAt, events: [event!] };
    });
    return { leads };
  }

  events(_account: SourceAccount, lead: ListedLead): Promise<ProviderEvent[]> {
    return Promise.resolve(lead.events ?? []);
  }
}
