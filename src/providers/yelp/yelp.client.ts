// Yelp's Leads API (providers.md §1, "Follow-up API"), with the connection's OAuth token. Answers
// are checked against yelp.schemas.ts; a wrong shape is a retryable `provider_bad_response`.
import { CONFIG, type JobsConfig } from "../../config/sections.js";
import { Inject, Injectable } from "@nestjs/common";
import { ProviderApi } from "../../common/outbound/provider-api.js";
import { PermanentError, RetryableError } from "../../common/outbound/errors.js";
import { ProviderQuota } from "../../common/outbound/provider-quota.js";
import { YELP_CONFIG, type YelpConfig } from "./yelp.config.js";
import {
  type YelpEvent,
  YelpEvents,
  YelpLead,
  YelpLeadIds,
  YelpSelfServeWebhook,
  YelpSubscriptions,
} from "./yelp.schemas.js";

/** The subscription type that makes Yelp send lead webhooks for a business ([DOCS Y1]). */
const WEBHOOK = "WEBHOOK";

/** Events per page: Yelp's maximum (`limit=1..20`). A shorter page is the end of the list. */
export const EVENTS_PAGE = 20;
const EVENTS_ROUTE = `/v3/leads/{id}/events?limit=${EVENTS_PAGE}`;

@Injectable()
export class YelpClient {
  private readonly api: ProviderApi;
  /** [CODE C1] POST subscribes; [ASSUMPTION] GET lists, DELETE removes: YELP_SUBSCRIPTIONS_PATH. */
  private readonly subscriptionsPath: string;

  constructor(
    @Inject(YELP_CONFIG) config: YelpConfig,
    @Inject(CONFIG.jobs) jobs: JobsConfig,
    quota: ProviderQuota,
  ) {
    this.api = new ProviderApi("yelp", config.apiBaseUrl, jobs.sideEffectTimeoutMs, quota);
    this.subscriptionsPath = config.subscriptionsPath;
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
   * Tells Yelp the business answered the lead outside Yelp (by phone or e-mail): `POST
   * /v3/leads/{id}/mark_as_replied` with `{reply_type}` (providers.md: the body is [ASSUMPTION]).
   */
  markAsReplied(token: string | undefined, leadId: string, replyType: "PHONE" | "EMAIL"): Promise<void> {
    return this.api.post("/v3/leads/{id}/mark_as_replied", { id: leadId }, token, { reply_type: replyType });
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

  /** [ASSUMPTION] The businesses subscribed for webhooks (items read leniently; others skipped). */
  async webhookSubscriptions(token: string | undefined): Promise<string[]> {
    const answer = await this.api.get(this.subscriptionsPath, {}, token, YelpSubscriptions);
    return (answer.subscriptions ?? answer.businesses ?? answer.data ?? []).flatMap((item) => {
      if (item === null || typeof item !== "object") return [];
      const { business_id: id, subscription_types: types } = item as Record<string, unknown>;
      if (typeof id !== "string") return [];
      return !Array.isArray(types) || types.includes(WEBHOOK) ? [id] : [];
    });
  }

  /** [CODE C1] Subscribes the businesses for lead webhooks. */
  subscribe(token: string | undefined, businessIds: string[]): Promise<void> {
    return this.api.request("POST", this.subscriptionsPath, {}, token, subscription(businessIds));
  }

  /** [ASSUMPTION] Removes the businesses' webhook subscriptions (DELETE with the POST's body). */
  unsubscribe(token: string | undefined, businessIds: string[]): Promise<void> {
    return this.api.request("DELETE", this.subscriptionsPath, {}, token, subscription(businessIds));
  }

  /** [DOCS Y3] A self-serve lead webhook restricted to the business: its id and expiry. */
  async createWebhook(
    token: string | undefined,
    webhookUrl: string,
    businessId: string,
  ): Promise<{ webhookId: string; expiresAt: Date }> {
    const created = await this.api.send(
      "POST",
      "/v3/webhooks",
      {},
      token,
      { webhook_url: webhookUrl, webhook_type: "leads_event", restricted_business_ids: [businessId] },
      YelpSelfServeWebhook,
    );
    const expiresAt = new Date(created.expiration_date);
    if (Number.isNaN(expiresAt.getTime())) throw new RetryableError("provider_bad_response");
    return { webhookId: created.webhook_id, expiresAt };
  }

  /** [DOCS Y3] Deletes a self-serve webhook. */
  deleteWebhook(token: string | undefined, webhookId: string): Promise<void> {
    return this.api.request("DELETE", "/v3/webhooks/{id}", { id: webhookId }, token);
  }
}

function subscription(businessIds: string[]) {
  return { business_ids: businessIds, subscription_types: [WEBHOOK] };
}
