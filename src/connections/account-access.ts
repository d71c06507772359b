// Proof that a provider token reaches a connection's account: one read call to the provider (api.md
// "Connecting provider accounts"), the provider's own (ProviderRegistrar.probeAccount). A 401, 403
// or 404 means the grant does not cover the account.
import { Injectable } from "@nestjs/common";
import { AppError } from "../common/app-error.js";
import { CredentialError, PermanentError } from "../common/outbound/errors.js";
import { hasApi } from "../providers/capabilities.js";
import type { Provider } from "../providers/provider-event.js";
import { RegistrationRegistry } from "../providers/registration-registry.js";

export type AccountAccess = "accessible" | "not_accessible";

/** The provider could not be asked (network, 5xx, a garbled answer): nothing is decided. */
export class ProviderUnavailable extends Error {
  constructor() {
    super("provider_unavailable");
  }
}

@Injectable()
export class AccountAccessCheck {
  constructor(private readonly registrars: RegistrationRegistry) {}

  /** Whether `accessToken` reaches `externalAccountId`; a provider without an API: always accessible. */
  async check(provider: Provider, externalAccountId: string, accessToken: string): Promise<AccountAccess> {
    try {
      if (hasApi(provider)) await this.registrars.get(provider).probeAccount(accessToken, externalAccountId);
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
