// Yelp's variables (api.md "Running"): its API, the platform-wide webhook URL's token and senders,
// how webhooks are registered, and the documented OAuth endpoints and call budget.
import { ConfigError, type Env, ipRanges, oneOf, pathTemplate, read, url } from "../../config/env.js";
import type { IpRange } from "../../config/ip-ranges.js";
import { providerConfigToken, type ProviderConfigSpec } from "../../config/provider-config.js";
import { secret } from "../../config/secrets.js";

export const YELP_WEBHOOK_MODES = ["subscriptions", "self-serve"] as const;
export type YelpWebhookMode = (typeof YELP_WEBHOOK_MODES)[number];

export interface YelpConfig {
  apiBaseUrl: string;
  /** The URL token of the one webhook URL Yelp calls for every business (YELP_WEBHOOK_TOKEN). */
  webhookToken: string | undefined;
  /**
   * The token being rotated out (YELP_WEBHOOK_TOKEN_PREVIOUS): its URL still takes deliveries and
   * the handshake, and self-serve webhooks registered at it are moved to the current token's URL.
   */
  webhookTokenPrevious: string | undefined;
  /** Yelp sender addresses or CIDRs (empty: any sender with the URL token). */
  allowedIps: IpRange[];
  /** How Yelp is told to send webhooks: the Business Subscriptions API, or self-serve `/v3/webhooks`. */
  webhookMode: YelpWebhookMode;
  /** [ASSUMPTION] GET lists our subscriptions, DELETE (same body as POST) removes: YELP_SUBSCRIPTIONS_PATH. */
  subscriptionsPath: string;
}

/** The injection token of Yelp's section. */
export const YELP_CONFIG = providerConfigToken("yelp");

export function yelpConfig(env: Env): YelpConfig {
  return {
    apiBaseUrl: url(env, "YELP_API_BASE_URL", "https://api.yelp.com", ["https:", "http:"]),
    webhookToken: secret(env, "YELP_WEBHOOK_TOKEN", 16),
    webhookTokenPrevious: previousToken(env),
    allowedIps: ipRanges(env, "YELP_ALLOWED_IPS"),
    webhookMode: oneOf(env, "YELP_WEBHOOK_MODE", YELP_WEBHOOK_MODES, "subscriptions"),
    subscriptionsPath: pathTemplate(env, "YELP_SUBSCRIPTIONS_PATH", "/v3/businesses/subscriptions", []),
  };
}

/** YELP_WEBHOOK_TOKEN_PREVIOUS: a token as YELP_WEBHOOK_TOKEN, beside a current one, and not the same. */
function previousToken(env: Env): string | undefined {
  const name = "YELP_WEBHOOK_TOKEN_PREVIOUS";
  const previous = secret(env, name, 16);
  if (previous === undefined) return undefined;
  const current = read(env, "YELP_WEBHOOK_TOKEN");
  if (current === undefined)
    throw new ConfigError(name, "needs YELP_WEBHOOK_TOKEN (the token it is rotated to)");
  if (current === previous) throw new ConfigError(name, "must differ from YELP_WEBHOOK_TOKEN");
  return previous;
}

export const YELP_CONFIG_SPEC: ProviderConfigSpec = {
  id: "yelp",
  parse: yelpConfig,
  // providers.md "Connecting a business": the documented endpoints and scope; no revocation endpoint.
  oauth: {
    authorizeUrl: "https://biz.yelp.com/oauth2/authorize",
    tokenUrl: "https://api.yelp.com/oauth2/token",
    scopes: "leads",
    revocation: false,
  },
  // Yelp's documented 5 requests/s per endpoint; no daily budget unless set.
  rateLimit: { perSecond: 5, perDay: undefined },
};
