// Thumbtack's Partner API v4 (providers.md §2, "Follow-up API"), with the connection's OAuth token.
// Answers are checked against thumbtack.schemas.ts; a wrong shape is a retryable `provider_bad_response`.
import { Inject, Injectable } from "@nestjs/common";
import type { AppConfig } from "../../config/config.js";
import { APP_CONFIG } from "../../config/config.module.js";
import { ProviderApi } from "../../common/outbound/provider-api.js";
import { ProviderQuota } from "../../common/outbound/provider-quota.js";
import {
  type ThumbtackMessage,
  ThumbtackMessages,
  ThumbtackNegotiations,
  ThumbtackWebhooks,
} from "./thumbtack.schemas.js";

@Injectable()
export class ThumbtackClient {
  private readonly api: ProviderApi;

  private readonly negotiationsPath: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig, quota: ProviderQuota) {
    this.api = new ProviderApi("thumbtack", config.thumbtackApiBaseUrl, config.sideEffectTimeoutMs, quota);
    this.negotiationsPath = config.thumbtackNegotiationsPath;
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
}
