// Thumbtack's Partner API v4 (providers.md §2, "Follow-up API"), with the connection's OAuth token.
import { Inject, Injectable } from "@nestjs/common";
import type { AppConfig } from "../../config/config.js";
import { APP_CONFIG } from "../../config/config.module.js";
import { callProviderApi } from "../../common/outbound/destination.js";
import { RetryableError } from "../../common/outbound/errors.js";

export interface ThumbtackMessage {
  messageID?: string;
  from?: string;
  text?: string;
  sentAt?: string;
}

@Injectable()
export class ThumbtackClient {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async getMessages(token: string | undefined, negotiationId: string): Promise<ThumbtackMessage[]> {
    const body = await this.json<{ messages?: ThumbtackMessage[]; data?: ThumbtackMessage[] }>(
      "GET",
      `/api/v4/negotiations/${encodeURIComponent(negotiationId)}/messages?limit=20`,
      token,
    );
    const messages = body.messages ?? body.data;
    // Without a readable list we cannot tell whether our message is there: try again later.
    if (!Array.isArray(messages)) throw new RetryableError("thumbtack_messages_unreadable");
    return messages;
  }

  async postMessage(token: string | undefined, negotiationId: string, text: string): Promise<void> {
    await this.json("POST", `/api/v4/negotiations/${encodeURIComponent(negotiationId)}/messages`, token, {
      text,
    });
  }

  private json<T>(method: string, path: string, token: string | undefined, body?: unknown): Promise<T> {
    return callProviderApi<T>(
      `${this.config.thumbtackApiBaseUrl}${path}`,
      method,
      token,
      this.config.sideEffectTimeoutMs,
      body,
    );
  }
}
