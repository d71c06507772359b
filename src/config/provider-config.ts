// A provider's configuration, as its plugin declares it (src/providers/<name>/<name>.config.ts): its
// own variables (`YELP_*`) parsed at boot into a section of their own, the documented OAuth
// endpoints its `<ID>_OAUTH_*` variables start from, and its default outbound call budget.
// loadConfig reads them from the list the entry points pass in; nothing here names a provider.
import { ConfigError, type Env, read, required, url } from "./env.js";

/** What one provider adds to the configuration. */
export interface ProviderConfigSpec {
  /** The provider's id (`yelp`): its variables' prefix in capitals, its section's name. */
  readonly id: string;
  /** Reads its own variables; a bad one throws a ConfigError naming it. Absent: no variables. */
  readonly parse?: (env: Env) => object;
  /** Its documented OAuth endpoints and scopes; absent: no OAuth. */
  readonly oauth?: OAuthDefaults;
  /** Its outbound call budgets unless PROVIDER_RATE_LIMITS says otherwise; absent: Leadgate never calls it. */
  readonly rateLimit?: ProviderRateLimit;
}

export interface OAuthDefaults {
  readonly authorizeUrl: string;
  readonly tokenUrl: string;
  /** Space-separated, as `<ID>_OAUTH_SCOPES` would give them. */
  readonly scopes: string;
  /** Whether it documents an RFC 7009 revocation endpoint (`<ID>_OAUTH_REVOKE_URL` is then read). */
  readonly revocation: boolean;
}

/** One provider's OAuth 2 client registration (api.md "Running"). */
export interface OAuthClientConfig {
  clientId: string;
  clientSecret: string;
  authorizeUrl: string;
  tokenUrl: string;
  /** RFC 7009 revocation endpoint, where the provider documents one and it is set. */
  revokeUrl: string | undefined;
  scopes: string[];
}

/** A provider's call budgets; undefined: off. */
export interface ProviderRateLimit {
  /** Calls per second to one endpoint (`<provider>=N/s`). */
  perSecond: number | undefined;
  /** Calls per day to all its endpoints together (`<provider>-daily=N`). */
  perDay: number | undefined;
}

/** The injection token of a provider's own section (`@Inject(providerConfigToken(id))`, exported by its plugin folder). */
export function providerConfigToken(id: string): symbol {
  return Symbol.for(`leadgate:config:provider:${id}`);
}

/** Every provider's own section, by id. */
export function providerSections(env: Env, specs: readonly ProviderConfigSpec[]): Record<string, object> {
  return Object.fromEntries(specs.flatMap((spec) => (spec.parse ? [[spec.id, spec.parse(env)]] : [])));
}

/** The OAuth clients set up (`<ID>_OAUTH_CLIENT_ID` given), by provider id; others are absent. */
export function oauthClients(
  env: Env,
  specs: readonly ProviderConfigSpec[],
): Record<string, OAuthClientConfig> {
  return Object.fromEntries(
    specs.flatMap((spec) => {
      const client = spec.oauth && oauthClient(env, spec.id, spec.oauth);
      return client ? [[spec.id, client]] : [];
    }),
  );
}

function oauthClient(env: Env, id: string, defaults: OAuthDefaults): OAuthClientConfig | undefined {
  const prefix = `${id.toUpperCase()}_OAUTH_`;
  const clientId = read(env, `${prefix}CLIENT_ID`);
  if (clientId === undefined) return undefined;
  const scopes = (read(env, `${prefix}SCOPES`) ?? defaults.scopes).split(/[\s,]+/).filter(Boolean);
  if (scopes.some((scope) => !/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(scope))) {
    throw new ConfigError(`${prefix}SCOPES`, "must be scope names separated by spaces or commas");
  }
  const revokeName = `${prefix}REVOKE_URL`;
  return {
    clientId,
    clientSecret: required(
      env,
      `${prefix}CLIENT_SECRET`,
      `the client secret that goes with ${prefix}CLIENT_ID`,
    ),
    authorizeUrl: url(env, `${prefix}AUTHORIZE_URL`, defaults.authorizeUrl, ["https:", "http:"]),
    tokenUrl: url(env, `${prefix}TOKEN_URL`, defaults.tokenUrl, ["https:", "http:"]),
    revokeUrl:
      defaults.revocation && read(env, revokeName) !== undefined
        ? url(env, revokeName, undefined, ["https:", "http:"])
        : undefined,
    scopes,
  };
}

/**
 * PROVIDER_RATE_LIMITS (`yelp=5/s,yelp-daily=500,thumbtack=off`) over the providers' defaults, for
 * every provider Leadgate calls: each entry overrides its default once.
 */
export function providerRateLimits(
  env: Env,
  specs: readonly ProviderConfigSpec[],
): Record<string, ProviderRateLimit> {
  const name = "PROVIDER_RATE_LIMITS";
  const limits: Record<string, ProviderRateLimit> = Object.fromEntries(
    specs.flatMap((spec) => (spec.rateLimit ? [[spec.id, { ...spec.rateLimit }]] : [])),
  );
  const value = read(env, name);
  if (value === undefined) return limits;
  const ids = Object.keys(limits);
  const [first = "provider", second = first] = ids;
  const seen = new Set<string>();
  for (const entry of value.split(",").map((part) => part.trim())) {
    const perSecond = /^([a-z0-9]+)=(?:off|([1-9]\d{0,5})\/s)$/.exec(entry);
    const perDay = /^([a-z0-9]+)-daily=(?:off|([1-9]\d{0,8}))$/.exec(entry);
    const match = perSecond ?? perDay;
    const key = entry.split("=")[0]!;
    if (!match || !ids.includes(match[1]!) || seen.has(key)) {
      throw new ConfigError(
        name,
        `must be a comma-separated list like "${first}=5/s,${first}-daily=500,${second}=off" naming ${ids.join(", ")}, each name once (got "${entry}")`,
      );
    }
    seen.add(key);
    limits[match[1]!]![perSecond ? "perSecond" : "perDay"] =
      match[2] === undefined ? undefined : Number(match[2]);
  }
  return limits;
}
