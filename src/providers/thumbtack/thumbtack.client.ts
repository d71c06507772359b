// Thumbtack's Partner API v4 (providers.md §2, "Follow-up API"), with the connection's OAuth token.
// Answers are checked against thumbtack.schemas.ts; a wrong shape is a retryable `provider_bad_response`.
import { CONFIG, type JobsConfig } from "../../config/sections.js";
import { Inject, Injectable } from "@nestjs/common";
import { ProviderApi } from "../../common/outbound/provider-api.js";
import { ProviderQuota } from "../../common/outbound/provider-quota.js";
import { THUMBTACK_CONFIG, type ThumbtackConfig } from "./thumbtack.config.js";
import {
  ThumbtackCreatedWebhook,
  type ThumbtackMessage,
  ThumbtackMessages,
  ThumbtackNegotiations,
  ThumbtackWebhooks,
} from "./thumbtack.schemas.js";

/** The events Leadgate registers for ([DOCS T1]). */
export const THUMBTACK_EVENT_TYPES = ["NegotiationCreatedV4", "MessageCreatedV4"] as const;

/** A webhook as Leadgate registers it ([DOCS T1]); `auth` only for Basic (token auth rides in the URL). */
export interface ThumbtackWebhookSpec {
  webhookURL: string;
  auth?: { username: string; password: string };
}

/** A webhook as the business's list shows it (read leniently: the list's item shape is [ASSUMPTION]). */
export interface ThumbtackListedWebhook {
  webhookID: string;
  webhookURL: string;
  enabled: boolean;
}

@Injectable()
export class ThumbtackClient {
  private readonly api: ProviderApi;
  /** [ASSUMPTION] one webhook's path (PUT updates, DELETE removes): THUMBTACK_WEBHOOK_PATH. */
  private readonly webhookPath: string;
  /** [ASSUMPTION] the business's negotiations list: THUMBTACK_NEGOTIATIONS_PATH. */
  private readonly negotiationsPath: string;

  constructor(
    @Inject(THUMBTACK_CONFIG) config: ThumbtackConfig,
    @Inject(CONFIG.jobs) jobs: JobsConfig,
    quota: ProviderQuota,
  ) {
    this.api = new ProviderApi("thumbtack", config.apiBaseUrl, jobs.sideEffectTimeoutMs, quota);
    this.webhookPath = config.webhookPath;
    this.negotiationsPath = config.negotiationsPath;
  }

  /**
   * [ASSUMPTION] The business's negotiations created since `since`, newest first (at most 50), on
   * THUMBTACK_NEGOTIATIONS_PATH. A 404 (no such endpoint) is a PermanentError `http_404`.
   */
  async listNegotiations(token: string | undefined, businessId: string, since: Date): Promise<unknown[]> {
    const answer = await this.api.get(
      `${this.negotiationsPath}?limit=50&createdAfter={since}`,
      { businessID: businessId, since: since.toISOString() },
      token,
      ThumbtackNegotiations,
    );
    return answer.negotiations ?? answer.data ?? [];
  }

  /** The negotiation's latest messages (at most 20). */
  async getMessages(token: string | undefined, negotiationId: string): Promise<ThumbtackMessage[]> {
    const answer = await this.api.get(
      "/api/v4/negotiations/{id}/messages?limit=20",
      { id: negotiationId },
      token,
      ThumbtackMessages,
    );
    // The schema lets one of the two through only as an array.
    return answer.messages ?? answer.data ?? [];
  }

  postMessage(token: string | undefined, negotiationId: string, text: string): Promise<void> {
    return this.api.post("/api/v4/negotiations/{id}/messages", { id: negotiationId }, token, { text });
  }

  /** The business's webhooks: the read that proves a grant reaches the business (401/403/404: it does not). */
  listWebhooks(token: string | undefined, businessId: string): Promise<ThumbtackWebhooks> {
    return this.api.get("/api/v4/businesses/{id}/webhooks", { id: businessId }, token, ThumbtackWebhooks);
  }

  /** The business's webhooks, each read leniently; an item without an id or URL is skipped. */
  async webhooks(token: string | undefined, businessId: string): Promise<ThumbtackListedWebhook[]> {
    const answer = await this.listWebhooks(token, businessId);
    return (answer.data ?? answer.webhooks ?? []).flatMap((item) => {
      if (item === null || typeof item !== "object") return [];
      const { webhookID, webhookURL, enabled } = item as Record<string, unknown>;
      const id = typeof webhookID === "number" ? String(webhookID) : webhookID;
      if (typeof id !== "string" || id === "" || typeof webhookURL !== "string") return [];
      return [{ webhookID: id, webhookURL, enabled: enabled !== false }];
    });
  }

  /** [DOCS T1] Creates the business's webhook for Leadgate's events, enabled; answers its id. */
  async createWebhook(
    token: string | undefined,
    businessId: string,
    spec: ThumbtackWebhookSpec,
  ): Promise<string> {
    const created = await this.api.send(
      "POST",
      "/api/v4/businesses/{businessID}/webhooks",
      { businessID: businessId },
      token,
      webhookBody(spec),
      ThumbtackCreatedWebhook,
    );
    return String(created.webhookID);
  }

  /** [ASSUMPTION] Updates one webhook (its URL, events, credentials) in place. */
  updateWebhook(
    token: string | undefined,
    businessId: string,
    webhookId: string,
    spec: ThumbtackWebhookSpec,
  ): Promise<void> {
    return this.api.request(
      "PUT",
      this.webhookPath,
      { businessID: businessId, webhookID: webhookId },
      token,
      webhookBody(spec),
    );
  }

  /** [ASSUMPTION] Removes one webhook. */
  deleteWebhook(token: string | undefined, businessId: string, webhookId: string): Promise<void> {
    return this.api.request(
      "DELETE",
      this.webhookPath,
      { businessID: businessId, webhookID: webhookId },
      token,
    );
  }
}

function webhookBody(spec: ThumbtackWebhookSpec) {
  return {
    webhookURL: spec.webhookURL,
    eventTypes: [...THUMBTACK_EVENT_TYPES],
    enabled: true,
    ...(spec.auth ? { auth: spec.auth } : {}),
  };
}
