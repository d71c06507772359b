// Proof that a provider token reaches a connection's account: one read call to the provider (api.md
// "Connecting provider accounts"). Yelp: the business's lead-id list; Thumbtack: the business's
// webhooks list. A 401, 403 or 404 means the grant does not cover the account.
import { Injectable } from "@nestjs/common";
import { AppError } from "../common/app-error.js";
import { CredentialError, PermanentError } from "../common/outbound/errors.js";
import type { Provider } from "../providers/provider-event.js";
import { ThumbtackClient } from "../providers/thumbtack/thumbtack.client.js";
import { YelpClient } from "../providers/yelp/yelp.client.js";

export type AccountAccess = "accessible" | "not_accessible";

/** The provider could not be asked (network, 5xx, a garbled answer): nothing is decided. */
export class ProviderUnavailable extends Error {
  constructor() {
    super("provider_unavailable");
  }
}

@Injectable()
export class AccountAccessCheck {
  constructor(
    private readonly yelp: YelpClient,
    private readonly thumbtack: ThumbtackClient,
  ) {}

  /** Whether `accessToken` reaches `externalAccountId`; Static Forms has no API: always accessible. */
  async check(provider: Provider, externalAccountId: string, accessToken: string): Promise<AccountAccess> {
    try {
      if (provider === "yelp") await this.yelp.listLeadIds(accessToken, externalAccountId);
      if (provider === "thumbtack") await this.thumbtack.listWebhooks(accessToken, externalAccountId);
      return "accessible";
    } catch (error) {
      if (error instanceof CredentialError) return "not_accessible";
      if (error instanceof PermanentError && error.code === "http_404") return "not_accessible";
      throw new ProviderUnavailable();
    }
  }

  /** For pasted credentials: `422 account_not_accessible`, or `503 provider_unavailable`. */
  async require(provider: Provider, externalAccountId: string, accessToken: string): Promise<void> {
    let access: AccountAccess;
    try {
      access = await this.check(provider, externalAccountId, accessToken);
    } catch (error) {
      if (!(error instanceof ProviderUnavailable)) throw error;
      throw new AppError(
        503,
        "provider_unavailable",
        `${provider} could not be asked whether the credentials reach account ${externalAccountId}; try again.`,
      );
    }
    if (access === "not_accessible") {
      throw new AppError(
        422,
        "account_not_accessible",
        `The credentials do not reach ${provider} account ${externalAccountId}.`,
      );
    }
  }
}
