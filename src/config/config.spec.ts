import { ConfigError, loadConfig } from "./config.js";

const KEY = Buffer.alloc(32, 1).toString("base64");
const BASE = { DATABASE_URL: "postgresql://u@localhost:5432/db", LEADGATE_ENCRYPTION_KEY: KEY };

function errorOf(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("loadConfig accepted the environment");
}

describe("loadConfig", () => {
  it("applies api.md's defaults", () => {
    const config = loadConfig(BASE);
    expect(config).toMatchObject({
      redisUrl: "redis://127.0.0.1:6379",
      port: 3000,
      publicBaseUrl: "http://localhost:3000",
      yelpApiBaseUrl: "https://api.yelp.com",
      thumbtackApiBaseUrl: "https://api.thumbtack.com",
      payloadRetentionDays: 30,
      receiptRetentionDays: 400,
      webhookBodyLimitBytes: 262144,
      yelpAllowedIps: [],
      trustProxy: false,
      destinationAllowHttp: false,
      destinationAllowCidrs: [],
    });
    expect(config.encryptionKey).toHaveLength(32);
  });

  it("defaults DATABASE_URL and REDIS_URL to the local services", () => {
    const config = loadConfig({ LEADGATE_ENCRYPTION_KEY: KEY });
    expect(config.databaseUrl).toBe("postgresql://postgres@127.0.0.1:5432/leadgate");
    expect(config.redisUrl).toBe("redis://127.0.0.1:6379");
  });

  it("names a missing LEADGATE_ENCRYPTION_KEY", () => {
    const error = errorOf({ DATABASE_URL: BASE.DATABASE_URL });
    expect(error.variable).toBe("LEADGATE_ENCRYPTION_KEY");
    expect(error.message).toMatch(/^LEADGATE_ENCRYPTION_KEY is required/);
  });

  it.each([
    ["not base64", "not-base64!!"],
    ["too short", Buffer.alloc(16).toString("base64")],
    ["too long", Buffer.alloc(33).toString("base64")],
  ])("names a malformed LEADGATE_ENCRYPTION_KEY (%s) without echoing it", (_, value) => {
    const error = errorOf({ ...BASE, LEADGATE_ENCRYPTION_KEY: value });
    expect(error.variable).toBe("LEADGATE_ENCRYPTION_KEY");
    expect(error.message).not.toContain(value);
    expect(error.message.split("\n")).toHaveLength(1);
  });

  it.each([
    ["PORT", "eighty"],
    ["PORT", "70000"],
    ["REDIS_URL", "http://localhost"],
    ["DATABASE_URL", "mysql://x"],
    ["YELP_ALLOWED_IPS", "1.2.3.4,not-an-ip"],
    ["WEBHOOK_BODY_LIMIT_BYTES", "-1"],
    ["PAYLOAD_RETENTION_DAYS", "0"],
    ["REDIS_PREFIX", "has:colon"],
    ["LEADGATE_BOOTSTRAP_OPERATOR_KEY", "short"],
    ["TRUST_PROXY", "proxy.example"],
    ["LEADGATE_PREVIOUS_ENCRYPTION_KEYS", `${Buffer.alloc(32, 1).toString("base64")},short`],
    ["REPLAY_RATE_PER_SECOND", "0"],
    ["DESTINATION_ALLOW_HTTP", "yes"],
    ["DESTINATION_ALLOW_CIDRS", "10.0.0.0/8,10.0.0.1"],
    ["DESTINATION_ALLOW_CIDRS", "10.0.0.0/33"],
  ])("rejects %s=%s", (variable, value) => {
    expect(errorOf({ ...BASE, [variable]: value }).variable).toBe(variable);
  });

  it("parses the keys being rotated out", () => {
    const previous = [Buffer.alloc(32, 1), Buffer.alloc(32, 2)];
    const config = loadConfig({
      ...BASE,
      LEADGATE_PREVIOUS_ENCRYPTION_KEYS: previous.map((key) => key.toString("base64")).join(", "),
    });
    expect(config.previousEncryptionKeys).toEqual(previous);
    expect(loadConfig(BASE).previousEncryptionKeys).toEqual([]);
  });

  it("parses TRUST_PROXY as a hop count or a list of proxies", () => {
    expect(loadConfig({ ...BASE, TRUST_PROXY: "1" }).trustProxy).toBe(1);
    expect(loadConfig({ ...BASE, TRUST_PROXY: "10.0.0.0/8, 127.0.0.1" }).trustProxy).toEqual([
      "10.0.0.0/8",
      "127.0.0.1",
    ]);
  });

  it("parses the optional Yelp settings", () => {
    const config = loadConfig({
      ...BASE,
      YELP_ALLOWED_IPS: "52.35.20.1, ::1",
      YELP_WEBHOOK_TOKEN: "t".repeat(20),
    });
    expect(config.yelpAllowedIps).toEqual(["52.35.20.1", "::1"]);
    expect(config.yelpWebhookToken).toBe("t".repeat(20));
  });

  it("parses the outbound destination settings", () => {
    const config = loadConfig({
      ...BASE,
      DESTINATION_ALLOW_HTTP: "true",
      DESTINATION_ALLOW_CIDRS: "192.168.10.0/24, fd00::/8",
    });
    expect(config.destinationAllowHttp).toBe(true);
    expect(config.destinationAllowCidrs).toEqual(["192.168.10.0/24", "fd00::/8"]);
    expect(loadConfig({ ...BASE, DESTINATION_ALLOW_HTTP: "false" }).destinationAllowHttp).toBe(false);
  });

  it("without a client id a provider has no OAuth client; with one, documented defaults apply", () => {
    expect(loadConfig(BASE).oauth).toEqual({ yelp: undefined, thumbtack: undefined });
    const config = loadConfig({
      ...BASE,
      YELP_OAUTH_CLIENT_ID: "yelp-client",
      YELP_OAUTH_CLIENT_SECRET: "yelp-secret",
      THUMBTACK_OAUTH_CLIENT_ID: "tt-client",
      THUMBTACK_OAUTH_CLIENT_SECRET: "tt-secret",
      THUMBTACK_OAUTH_SCOPES: "offline_access supply::messages.write",
      THUMBTACK_OAUTH_REVOKE_URL: "https://auth.thumbtack.com/oauth2/revoke",
      OAUTH_RETURN_URL_ORIGINS: "https://app.example.com/ignored/path, http://127.0.0.1:8080",
      OAUTH_REFRESH_MARGIN_SECONDS: "120",
    });
    expect(config.oauth.yelp).toEqual({
      clientId: "yelp-client",
      clientSecret: "yelp-secret",
      authorizeUrl: "https://biz.yelp.com/oauth2/authorize",
      tokenUrl: "https://api.yelp.com/oauth2/token",
      revokeUrl: undefined,
      scopes: ["leads"],
    });
    expect(config.oauth.thumbtack).toMatchObject({
      authorizeUrl: "https://auth.thumbtack.com/oauth2/auth",
      tokenUrl: "https://auth.thumbtack.com/oauth2/token",
      revokeUrl: "https://auth.thumbtack.com/oauth2/revoke",
      scopes: ["offline_access", "supply::messages.write"],
    });
    expect(config.oauthReturnUrlOrigins).toEqual(["https://app.example.com", "http://127.0.0.1:8080"]);
    expect(config.oauthRefreshMarginSeconds).toBe(120);
    expect(loadConfig(BASE).oauthRefreshMarginSeconds).toBe(300);
  });

  it.each([
    [{ YELP_OAUTH_CLIENT_ID: "c" }, "YELP_OAUTH_CLIENT_SECRET"],
    [
      {
        THUMBTACK_OAUTH_CLIENT_ID: "c",
        THUMBTACK_OAUTH_CLIENT_SECRET: "s",
        THUMBTACK_OAUTH_TOKEN_URL: "ftp://x",
      },
      "THUMBTACK_OAUTH_TOKEN_URL",
    ],
    [
      { YELP_OAUTH_CLIENT_ID: "c", YELP_OAUTH_CLIENT_SECRET: "s", YELP_OAUTH_AUTHORIZE_URL: "not a url" },
      "YELP_OAUTH_AUTHORIZE_URL",
    ],
    [
      { YELP_OAUTH_CLIENT_ID: "c", YELP_OAUTH_CLIENT_SECRET: "s", YELP_OAUTH_SCOPES: 'le"ads' },
      "YELP_OAUTH_SCOPES",
    ],
    [
      {
        THUMBTACK_OAUTH_CLIENT_ID: "c",
        THUMBTACK_OAUTH_CLIENT_SECRET: "s",
        THUMBTACK_OAUTH_REVOKE_URL: "revoke",
      },
      "THUMBTACK_OAUTH_REVOKE_URL",
    ],
    [{ OAUTH_RETURN_URL_ORIGINS: "https://ok.example.com,nonsense" }, "OAUTH_RETURN_URL_ORIGINS"],
    [{ OAUTH_RETURN_URL_ORIGINS: "javascript:alert(1)" }, "OAUTH_RETURN_URL_ORIGINS"],
    [{ OAUTH_REFRESH_MARGIN_SECONDS: "-5" }, "OAUTH_REFRESH_MARGIN_SECONDS"],
  ])("names a malformed OAuth variable in one line (%j)", (env, variable) => {
    const error = errorOf({ ...BASE, ...env });
    expect(error.variable).toBe(variable);
    expect(error.message.split("\n")).toHaveLength(1);
    expect(error.message).not.toContain("yelp-secret");
  });
});
