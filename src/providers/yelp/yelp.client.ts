// Yelp's Leads API (providers.md §1, "Follow-up API"), with the connection's OAuth token. Answers
// are checked against yelp.schemas.ts; a wrong shape is a retryable `provider_bad_response`.
import { Inject, Injectable } from "@nestjs/common";
import type { AppConfig } from "../../config/config.js";
import { APP_CONFIG } from "../../config/config.module.js";
import { ProviderApi } from "../../common/outbound/provider-api.js";
import { PermanentError } from "../../common/outbound/errors.js";
import { ProviderQuota } from "../../common/outbound/provider-quota.js";
import { type YelpEvent, YelpEvents, YelpLead, YelpLeadIds } from "./yelp.schemas.js";

/** Events per page: Yelp's maximum (`limit=1..20`). A shorter page is the end of the list. */
export const EVENTS_PAGE = 20;
const EVENTS_ROUTE = `/v3/leads/{id}/events?limit=${EVENTS_PAGE}`;

@Injectable()
export class YelpClient {
  private readonly api: ProviderApi;

  constructor(@Inject(APP_CONFIG) config: AppConfig, quota: ProviderQuota) {
    this.api = new ProviderApi("yelp", config.yelpApiBaseUrl, config.sideEffectTimeoutMs, quota);
  }

  getLead(token: string | undefined, leadId: string): Promise<YelpLead> {
    return this.api.get("/v3/leads/{id}", { id: leadId }, token, YelpLead);
  }

  /**
   * One page of the lead's events in list order (newest last): the newest `EVENTS_PAGE`, or those
   * right before (`olderThan`) or after (`newerThan`) the event of that cursor.
   */
  async getEvents(
    token: string | undefined,
    leadId: string,
    from: { olderThan?: string; newerThan?: string } = {},
  ): Promise<YelpEvent[]> {
    const [route, params] =
      from.olderThan !== undefined
        ? [`${EVENTS_ROUTE}&older_than_cursor={cursor}`, { id: leadId, cursor: from.olderThan }]
        : from.newerThan !== undefined
          ? [`${EVENTS_ROUTE}&newer_than_cursor={cursor}`, { id: leadId, cursor: from.newerThan }]
          : [EVENTS_ROUTE, { id: leadId }];
    return (await this.api.get(route, params, token, YelpEvents)).events;
  }

  postText(token: string | undefined, leadId: string, text: string): Promise<void> {
    return this.api.post("/v3/leads/{id}/events", { id: leadId }, token, {
      request_type: "TEXT",
      request_content: text,
    });
  }

  /**
   * The business's lead ids: the read that proves a grant reaches the business (a 401/403/404 says
   * it does not). providers.md names two paths: the first, then the FAQ's on 404.
   */
  async listLeadIds(token: string | undefined, businessId: string, offset = 0): Promise<YelpLeadIds> {
    // [ASSUMPTION] Pages after the first are asked for with `offset` (the ids already read).
    const query = offset > 0 ? "?offset={offset}" : "";
    const params = { id: businessId, offset: String(offset) };
    try {
      return await this.api.get(`/v3/businesses/{id}/lead_ids${query}`, params, token, YelpLeadIds);
    } catch (error) {
      if (!(error instanceof PermanentError && error.code === "http_404")) throw error;
      return this.api.get(`/v3/leads/business/{id}/lead_ids${query}`, params, token, YelpLeadIds);
    }
  }
}
