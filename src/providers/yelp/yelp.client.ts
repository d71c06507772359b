// Yelp's Leads API (providers.md §1, "Follow-up API"), with the connection's OAuth token. Answers
// are checked against yelp.schemas.ts; a wrong shape is a retryable `provider_bad_response`.
import { Inject, Injectable } from "@nestjs/common";
import type { AppConfig } from "../../config/config.js";
import { APP_CONFIG } from "../../config/config.module.js";
import { ProviderApi } from "../../common/outbound/provider-api.js";
import { ProviderQuota } from "../../common/outbound/provider-quota.js";
import { type YelpEvent, YelpEvents, YelpLead } from "./yelp.schemas.js";

@Injectable()
export class YelpClient {
  private readonly api: ProviderApi;

  constructor(@Inject(APP_CONFIG) config: AppConfig, quota: ProviderQuota) {
    this.api = new ProviderApi("yelp", config.yelpApiBaseUrl, config.sideEffectTimeoutMs, quota);
  }

  getLead(token: string | undefined, leadId: string): Promise<YelpLead> {
    return this.api.get("/v3/leads/{id}", { id: leadId }, token, YelpLead);
  }

  /** The lead's latest events (at most 20). */
  async getEvents(token: string | undefined, leadId: string): Promise<YelpEvent[]> {
    const answer = await this.api.get("/v3/leads/{id}/events?limit=20", { id: leadId }, token, YelpEvents);
    return answer.events;
  }

  postText(token: string | undefined, leadId: string, text: string): Promise<void> {
    return this.api.post("/v3/leads/{id}/events", { id: leadId }, token, {
      request_type: "TEXT",
      request_content: text,
    });
  }
}
