// Thumbtack's variables (api.md "Running"): its API, the paths no readable document confirms, and
// the documented OAuth endpoints.
import { type Env, pathTemplate, url } from "../../config/env.js";
import { providerConfigToken, type ProviderConfigSpec } from "../../config/provider-config.js";

export interface ThumbtackConfig {
  apiBaseUrl: string;
  /** [ASSUMPTION] PUT updates, DELETE removes one webhook: THUMBTACK_WEBHOOK_PATH ({businessID}, {webhookID}). */
  webhookPath: string;
  /** [ASSUMPTION] Thumbtack's negotiations list ({businessID}): THUMBTACK_NEGOTIATIONS_PATH. 404: reconciliation is manual. */
  negotiationsPath: string;
}

/** The injection token of Thumbtack's section. */
export const THUMBTACK_CONFIG = providerConfigToken("thumbtack");

export function thumbtackConfig(env: Env): ThumbtackConfig {
  return {
    apiBaseUrl: url(env, "THUMBTACK_API_BASE_URL", "https://api.thumbtack.com", ["https:", "http:"]),
    webhookPath: pathTemplate(
      env,
      "THUMBTACK_WEBHOOK_PATH",
      "/api/v4/businesses/{businessID}/webhooks/{webhookID}",
      ["businessID", "webhookID"],
    ),
    negotiationsPath: pathTemplate(
      env,
      "THUMBTACK_NEGOTIATIONS_PATH",
      "/api/v4/businesses/{businessID}/negotiations",
      ["businessID"],
    ),
  };
}

export const THUMBTACK_CONFIG_SPEC: ProviderConfigSpec = {
  id: "thumbtack",
  parse: thumbtackConfig,
  // providers.md "Connecting a pro": the documented endpoints, and RFC 7009 revocation.
  oauth: {
    authorizeUrl: "https://auth.thumbtack.com/oauth2/auth",
    tokenUrl: "https://auth.thumbtack.com/oauth2/token",
    scopes: "offline_access",
    revocation: true,
  },
  // No documented budget: off unless PROVIDER_RATE_LIMITS sets one.
  rateLimit: { perSecond: undefined, perDay: undefined },
};
