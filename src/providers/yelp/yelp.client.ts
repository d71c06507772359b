// Yelp's Leads API (providers.md §1, "Follow-up API"), with the connection's OAuth token.
import { Inject, Injectable } from "@nestjs/common";
import type { AppConfig } from "../../config/config.js";
import { APP_CONFIG } from "../../config/config.module.js";
import { callProviderApi } from "../../common/outbound/destination.js";
import { PermanentError } from "../../common/outbound/errors.js";
import type { JsonObject } from "../provider-event.js";

export interface YelpEvent {
  id: string;
  event_type?: string;
  user_type?: "CONSUMER" | "BIZ";
  channel?: string;
  user_display_name?: string;
  event_content?: { text?: string; fallback_text?: string };
  time_created?: string;
}

@Injectable()
export class YelpClient {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  getLead(token: string | undefined, leadId: string): Promise<JsonObject> {
    return this.json<JsonObject>("GET", `/v3/leads/${encodeURIComponent(leadId)}`, token);
  }

  async getEvents(token: string | undefined, leadId: string): Promise<YelpEvent[]> {
    const body = await this.json<{ events?: YelpEvent[] }>(
      "GET",
      `/v3/leads/${encodeURIComponent(leadId)}/events?limit=20`,
      token,
    );
    if (!Array.isArray(body.events)) throw new PermanentError("yelp_events_malformed");
    return body.events;
  }

  async postText(token: string | undefined, leadId: string, text: string): Promise<void> {
    await this.json("POST", `/v3/leads/${encodeURIComponent(leadId)}/events`, token, {
      request_type: "TEXT",
      request_content: text,
    });
  }

  private json<T>(method: string, path: string, token: string | undefined, body?: unknown): Promise<T> {
    return callProviderApi<T>(
      `${this.config.yelpApiBaseUrl}${path}`,
      method,
      token,
      this.config.sideEffectTimeoutMs,
      body,
    );
  }
}
