import { randomBytes } from "node:crypto";
import { inIpRanges } from "./ip-ranges.js";
import { appConfig } from "../app-config.js";
import type { YelpConfig } from "../providers/yelp/yelp.config.js";
import { type AppConfig, ConfigError } from "./config.js";

const KEY = randomBytes(32).toString("base64");
const BASE = { DATABASE_URL: "postgresql://u@localhost:5432/db", LEADGATE_ENCRYPTION_KEY: KEY };

function errorOf(env: Record<string, string>): ConfigError {
  try {
    appConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("loadConfig accepted the environment");
}

const yelp = (config: AppConfig) => config.providerSections.yelp as YelpConfig;

describe("loadConfig", () => {
  it("applies api.md's defaults", () => {
    const config = appConfig(BASE);
    expect(config).toMatchObject({
      redisUrl: "redis://127.0.0.1:6379",
      port: 3000,
      publicBaseUrl: "http://localhost:3000",
      payloadRetentionDays: 30,
      receiptRetentionDays: 400,
      webhookBodyLimitBytes: 262144,
      trustProxy: false,
      workerMetricsHost: "127.0.0.1",
      metricsToken: undefined,
      httpRequestTimeoutMs: 30_000,
      httpKeepAliveTimeoutMs: 72_000,
      preauthFailureLimit: 300,
      ingestQueueLimit: 2_000,
      destinationAllowHttp: false,
      destinationAllowCidrs: [],
    });
    expect(config.encryptionKey).toHaveLength(32);
    // Each provider's own variables, parsed by its plugin, in a section of their own.
    expect(config.providerSections).toMatchObject({
      yelp: { apiBaseUrl: "https://api.yelp.com", allowedIps: [], webhookToken: undefined },
      thumbtack: { apiBaseUrl: "https://api.thumbtack.com" },
    });
    expect(Object.keys(config.providerSections)).not.toContain("staticforms");
  });

  it("defaults DATABASE_URL and REDIS_URL to the local services", () => {
    const config = appConfig({ LEADGATE_ENCRYPTION_KEY: KEY });
    expect(config.databaseUrl).toBe("postgresql://postgres@127.0.0.1:5432/leadgate");
    expect(config.redisUrl).toBe("redis://127.0.0.1:6379");
  });

  it("reads no replica unless DATABASE_REPLICA_URL is set", () => {
    expect(appConfig(BASE).databaseReplicaUrl).toBeUndefined();
    const replica = "postgresql://u@replica.internal:5432/db";
    expect(appConfig({ ...BASE, DATABASE_REPLICA_URL: replica }).databaseReplicaUrl).toBe(replica);
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
    ["DATABASE_REPLICA_URL", "mysql://replica"],
    ["DATABASE_REPLICA_URL", "replica.internal:5432"],
    ["YELP_ALLOWED_IPS", "1.2.3.4,not-an-ip"],
    ["WEBHOOK_BODY_LIMIT_BYTES", "-1"],
    ["PAYLOAD_RETENTION_DAYS", "0"],
    ["MESSAGE_RETENTION_DAYS", "0"],
    ["MESSAGE_RETENTION_DAYS", "a year"],
    ["AUDIT_RETENTION_DAYS", "-1"],
    ["AUDIT_RETENTION_DAYS", "36501"],
    ["REDIS_PREFIX", "has:colon"],
    ["LEADGATE_BOOTSTRAP_OPERATOR_KEY", "short"],
    ["TRUST_PROXY", "proxy.example"],
    ["LEADGATE_PREVIOUS_ENCRYPTION_KEYS", `${Buffer.alloc(32, 1).toString("base64")},short`],
    ["REPLAY_RATE_PER_SECOND", "0"],
    ["YELP_ALLOWED_IPS", "10.0.0.0/33"],
    ["YELP_ALLOWED_IPS", "127.1"],
    ["YELP_ALLOWED_IPS", "10.0.0.0/8/8"],
    ["WORKER_METRICS_HOST", "localhost"],
    ["METRICS_TOKEN", "short"],
    ["HTTP_REQUEST_TIMEOUT_MS", "100"],
    ["HTTP_KEEP_ALIVE_TIMEOUT_MS", "soon"],
    ["PREAUTH_FAILURE_LIMIT", "-1"],
    ["INGEST_QUEUE_LIMIT", "0"],
    ["DESTINATION_ALLOW_HTTP", "yes"],
    ["DISPATCHER_RUNS_JOBS", "no"],
    ["RELEASED_RUN_WAIT_MS", "-1"],
    ["RELEASED_RUN_WAIT_MS", "soon"],
    ["DESTINATION_ALLOW_CIDRS", "10.0.0.0/8,10.0.0.1"],
    ["DESTINATION_ALLOW_CIDRS", "10.0.0.0/33"],
    ["DESTINATION_MAX_CONCURRENCY", "0"],
    ["DESTINATION_MAX_CONCURRENCY", "half"],
    ["CIRCUIT_FAILURE_THRESHOLD", "0"],
    ["CIRCUIT_PROBE_SECONDS", "-5"],
    ["ADMIN_RATE_LIMIT", "1200/min"],
    ["ADMIN_TENANT_RATE_LIMIT", "0"],
    ["ADMIN_TENANT_RATE_LIMIT", "5x"],
    ["ADMIN_READS_PER_TENANT", "0"],
    ["ADMIN_READS_PER_TENANT", "two"],
    ["MAX_API_KEYS_PER_TENANT", "0"],
    ["MAX_API_KEYS_PER_TENANT", "fifty"],
    ["MAX_CHANNELS_PER_TENANT", "0"],
    ["MAX_CHANNELS_PER_TENANT", "twenty"],
    ["MAX_USERS_PER_TENANT", "0"],
    ["MAX_USERS_PER_TENANT", "a hundred"],
    ["YELP_WEBHOOK_MODE", "manual"],
    ["LOG_LEVEL", "verbose"],
    ["REGISTRATION_SYNC_INTERVAL_SECONDS", "172800"],
    ["YELP_SUBSCRIPTIONS_PATH", "v3/subscriptions"],
    ["THUMBTACK_WEBHOOK_PATH", "/api/v4/webhooks/{webhookID}"],
    ["ALLOW_INSECURE_PUBLIC_URL", "yes"],
  ])("rejects %s=%s", (variable, value) => {
    expect(errorOf({ ...BASE, [variable]: value }).variable).toBe(variable);
  });

  it("paces Yelp at its documented 5 requests/s per endpoint by default, daily budgets off", () => {
    expect(appConfig(BASE).providerRateLimits).toEqual({
      yelp: { perSecond: 5, perDay: undefined },
      thumbtack: { perSecond: undefined, perDay: undefined },
    });
  });

  it("parses PROVIDER_RATE_LIMITS: each entry overrides its default", () => {
    const config = appConfig({ ...BASE, PROVIDER_RATE_LIMITS: "yelp=off, yelp-daily=500,thumbtack=3/s" });
    expect(config.providerRateLimits).toEqual({
      yelp: { perSecond: undefined, perDay: 500 },
      thumbtack: { perSecond: 3, perDay: undefined },
    });
    expect(appConfig({ ...BASE, PROVIDER_RATE_LIMITS: "thumbtack-daily=1000" }).providerRateLimits).toEqual({
      yelp: { perSecond: 5, perDay: undefined },
      thumbtack: { perSecond: undefined, perDay: 1000 },
    });
  });

  it.each([
    ["no budget", "yelp"],
    ["a per-second budget without /s", "yelp=5"],
    ["a daily budget with /s", "yelp-daily=500/s"],
    ["zero", "yelp=0/s"],
    ["a fraction", "yelp=2.5/s"],
    ["an unknown provider", "staticforms=5/s"],
    ["an unknown window", "yelp-hourly=100"],
    ["a name twice", "yelp=5/s,yelp=off"],
    ["an empty entry", "yelp=5/s,,thumbtack=off"],
  ])("stops on a malformed PROVIDER_RATE_LIMITS (%s) with one line naming it", (_, value) => {
    const error = errorOf({ ...BASE, PROVIDER_RATE_LIMITS: value });
    expect(error.variable).toBe("PROVIDER_RATE_LIMITS");
    expect(error.message).toMatch(/^PROVIDER_RATE_LIMITS /);
    expect(error.message.split("\n")).toHaveLength(1);
  });

  it("parses the keys being rotated out", () => {
    const previous = [Buffer.alloc(32, 1), Buffer.alloc(32, 2)];
    const config = appConfig({
      ...BASE,
      LEADGATE_PREVIOUS_ENCRYPTION_KEYS: previous.map((key) => key.toString("base64")).join(", "),
    });
    expect(config.previousEncryptionKeys).toEqual(previous);
    expect(appConfig(BASE).previousEncryptionKeys).toEqual([]);
  });

  it("parses TRUST_PROXY as a hop count or a list of proxies", () => {
    expect(appConfig({ ...BASE, TRUST_PROXY: "1" }).trustProxy).toBe(1);
    expect(appConfig({ ...BASE, TRUST_PROXY: "10.0.0.0/8, 127.0.0.1" }).trustProxy).toEqual([
      "10.0.0.0/8",
      "127.0.0.1",
    ]);
  });

  it("parses the optional Yelp settings", () => {
    const config = appConfig({
      ...BASE,
      YELP_ALLOWED_IPS: "52.35.20.1, ::1, 10.1.0.0/16, 2001:db8::/32",
      YELP_WEBHOOK_TOKEN: "yelp-url-token-0123456789",
    });
    const allowed = (ip: string) => inIpRanges(ip, yelp(config).allowedIps);
    expect(["52.35.20.1", "::1", "10.1.255.3", "::ffff:10.1.0.9", "2001:db8::7"].map(allowed)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    expect(["52.35.20.2", "10.2.0.1", "2001:db9::1", "not-an-ip"].map(allowed)).toEqual([
      false,
      false,
      false,
      false,
    ]);
    expect(yelp(config).webhookToken).toBe("yelp-url-token-0123456789");
    expect(yelp(config).webhookTokenPrevious).toBeUndefined();
  });

  it("parses YELP_WEBHOOK_TOKEN_PREVIOUS as a token beside, and different from, the current one", () => {
    const currentToken = "new-yelp-token-4f9a2c7e";
    const previousToken = "old-yelp-token-8b1d3e";
    const shortToken = "old-yelp-tok-15";
    const current = { ...BASE, YELP_WEBHOOK_TOKEN: currentToken };
    expect(
      yelp(appConfig({ ...current, YELP_WEBHOOK_TOKEN_PREVIOUS: previousToken })).webhookTokenPrevious,
    ).toBe(previousToken);
    for (const [env, problem] of [
      [{ ...current, YELP_WEBHOOK_TOKEN_PREVIOUS: shortToken }, "at least 16 characters"],
      [{ ...current, YELP_WEBHOOK_TOKEN_PREVIOUS: currentToken }, "must differ from YELP_WEBHOOK_TOKEN"],
      [{ ...BASE, YELP_WEBHOOK_TOKEN_PREVIOUS: previousToken }, "needs YELP_WEBHOOK_TOKEN"],
    ] as const) {
      const error = errorOf(env);
      expect(error.variable).toBe("YELP_WEBHOOK_TOKEN_PREVIOUS");
      expect(error.message).toContain(problem);
      expect(error.message).not.toContain(shortToken); // a secret is never echoed
      expect(error.message).not.toContain(currentToken);
    }
  });

  it("parses the edge settings", () => {
    const config = appConfig({
      ...BASE,
      WORKER_METRICS_HOST: "0.0.0.0",
      METRICS_TOKEN: "metrics-token-0123456789",
      HTTP_REQUEST_TIMEOUT_MS: "1500",
      HTTP_KEEP_ALIVE_TIMEOUT_MS: "5000",
      PREAUTH_FAILURE_LIMIT: "0",
      INGEST_QUEUE_LIMIT: "10",
    });
    expect(config).toMatchObject({
      workerMetricsHost: "0.0.0.0",
      metricsToken: "metrics-token-0123456789",
      httpRequestTimeoutMs: 1500,
      httpKeepAliveTimeoutMs: 5000,
      preauthFailureLimit: 0,
      ingestQueueLimit: 10,
    });
  });

  it("parses the outbound destination settings", () => {
    const config = appConfig({
      ...BASE,
      DESTINATION_ALLOW_HTTP: "true",
      DESTINATION_ALLOW_CIDRS: "192.168.10.0/24, fd00::/8",
    });
    expect(config.destinationAllowHttp).toBe(true);
    expect(config.destinationAllowCidrs).toEqual(["192.168.10.0/24", "fd00::/8"]);
    expect(appConfig({ ...BASE, DESTINATION_ALLOW_HTTP: "false" }).destinationAllowHttp).toBe(false);
  });

  it("DISPATCHER_RUNS_JOBS is on unless set to false", () => {
    expect(appConfig(BASE).dispatcherRunsJobs).toBe(true);
    expect(appConfig({ ...BASE, DISPATCHER_RUNS_JOBS: "false" }).dispatcherRunsJobs).toBe(false);
  });

  it("RELEASED_RUN_WAIT_MS: 500 by default, 0 (never wait) to 60000", () => {
    expect(appConfig(BASE).releasedRunWaitMs).toBe(500);
    expect(appConfig({ ...BASE, RELEASED_RUN_WAIT_MS: "0" }).releasedRunWaitMs).toBe(0);
    expect(appConfig({ ...BASE, RELEASED_RUN_WAIT_MS: "60000" }).releasedRunWaitMs).toBe(60_000);
    expect(() => appConfig({ ...BASE, RELEASED_RUN_WAIT_MS: "60001" })).toThrow(/RELEASED_RUN_WAIT_MS/);
  });

  it("without a client id a provider has no OAuth client; with one, documented defaults apply", () => {
    expect(appConfig(BASE).oauth).toEqual({});
    const config = appConfig({
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
    expect(appConfig(BASE).oauthRefreshMarginSeconds).toBe(300);
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

  it("parses the fairness limits (api.md's defaults: half the operation's slots, 10 failures, 30 s, 1200/min)", () => {
    expect(appConfig(BASE)).toMatchObject({
      destinationMaxConcurrency: undefined,
      circuitFailureThreshold: 10,
      circuitProbeSeconds: 30,
      adminRateLimit: 1200,
    });
    expect(
      appConfig({
        ...BASE,
        DESTINATION_MAX_CONCURRENCY: "4",
        CIRCUIT_FAILURE_THRESHOLD: "3",
        CIRCUIT_PROBE_SECONDS: "2",
        ADMIN_RATE_LIMIT: "60",
      }),
    ).toMatchObject({
      destinationMaxConcurrency: 4,
      circuitFailureThreshold: 3,
      circuitProbeSeconds: 2,
      adminRateLimit: 60,
    });
  });

  it("limits per tenant: 5× ADMIN_RATE_LIMIT across a tenant's keys, 50 active keys, unless set", () => {
    expect(appConfig(BASE)).toMatchObject({ adminTenantRateLimit: 6000, maxApiKeysPerTenant: 50 });
    expect(appConfig({ ...BASE, ADMIN_RATE_LIMIT: "60" })).toMatchObject({ adminTenantRateLimit: 300 });
    expect(
      appConfig({
        ...BASE,
        ADMIN_RATE_LIMIT: "60",
        ADMIN_TENANT_RATE_LIMIT: "100",
        MAX_API_KEYS_PER_TENANT: "3",
      }),
    ).toMatchObject({ adminRateLimit: 60, adminTenantRateLimit: 100, maxApiKeysPerTenant: 3 });
  });

  it("admin reads a tenant runs at once: 2 of the admin pool's 4 unless ADMIN_READS_PER_TENANT says otherwise", () => {
    expect(appConfig(BASE)).toMatchObject({ adminReadsPerTenant: 2 });
    expect(appConfig({ ...BASE, ADMIN_READS_PER_TENANT: "1" })).toMatchObject({ adminReadsPerTenant: 1 });
  });

  it("notification channels per tenant: 20 unless MAX_CHANNELS_PER_TENANT says otherwise", () => {
    expect(appConfig(BASE)).toMatchObject({ maxChannelsPerTenant: 20 });
    expect(appConfig({ ...BASE, MAX_CHANNELS_PER_TENANT: "3" })).toMatchObject({ maxChannelsPerTenant: 3 });
  });

  it("console users per tenant: 100 unless MAX_USERS_PER_TENANT says otherwise", () => {
    expect(appConfig(BASE)).toMatchObject({ maxUsersPerTenant: 100 });
    expect(appConfig({ ...BASE, MAX_USERS_PER_TENANT: "3" })).toMatchObject({ maxUsersPerTenant: 3 });
  });

  it("provider registration: Yelp subscriptions, a daily re-sync, the assumed paths by default", () => {
    expect(appConfig(BASE)).toMatchObject({
      registrationSyncIntervalSeconds: 86_400,
      providerSections: {
        yelp: { webhookMode: "subscriptions", subscriptionsPath: "/v3/businesses/subscriptions" },
        thumbtack: { webhookPath: "/api/v4/businesses/{businessID}/webhooks/{webhookID}" },
      },
    });
    expect(
      appConfig({
        ...BASE,
        YELP_WEBHOOK_MODE: "self-serve",
        THUMBTACK_WEBHOOK_PATH: "/api/v5/businesses/{businessID}/hooks/{webhookID}",
      }),
    ).toMatchObject({
      providerSections: {
        yelp: { webhookMode: "self-serve" },
        thumbtack: { webhookPath: "/api/v5/businesses/{businessID}/hooks/{webhookID}" },
      },
    });
  });

  describe("in production (NODE_ENV=production)", () => {
    const PRODUCTION = { ...BASE, NODE_ENV: "production" };

    it.each([
      ["an http:// PUBLIC_BASE_URL", { PUBLIC_BASE_URL: "http://leads.example.com" }],
      ["no PUBLIC_BASE_URL (the default is http://localhost:$PORT)", {}],
    ])("refuses %s with one line naming ALLOW_INSECURE_PUBLIC_URL", (_, env) => {
      const error = errorOf({ ...PRODUCTION, ...env });
      expect(error.variable).toBe("PUBLIC_BASE_URL");
      expect(error.message).toMatch(/^PUBLIC_BASE_URL must be https:\/\/ when NODE_ENV=production/);
      expect(error.message).toContain("ALLOW_INSECURE_PUBLIC_URL=true");
      expect(error.message.split("\n")).toHaveLength(1);
    });

    it("starts with an https:// PUBLIC_BASE_URL, or an http:// one when ALLOW_INSECURE_PUBLIC_URL=true", () => {
      expect(appConfig({ ...PRODUCTION, PUBLIC_BASE_URL: "https://leads.example.com/" }).publicBaseUrl).toBe(
        "https://leads.example.com",
      );
      const insecure = {
        ...PRODUCTION,
        PUBLIC_BASE_URL: "http://10.0.0.5:3000",
        ALLOW_INSECURE_PUBLIC_URL: "true",
      };
      expect(appConfig(insecure).publicBaseUrl).toBe("http://10.0.0.5:3000");
      expect(errorOf({ ...insecure, ALLOW_INSECURE_PUBLIC_URL: "false" }).variable).toBe("PUBLIC_BASE_URL");
    });

    it("outside production, an http:// PUBLIC_BASE_URL is fine (npm start, tests)", () => {
      for (const NODE_ENV of ["development", "test"]) {
        expect(appConfig({ ...BASE, NODE_ENV, PUBLIC_BASE_URL: "http://localhost:3000" }).publicBaseUrl).toBe(
          "http://localhost:3000",
        );
      }
    });
  });

  describe("placeholder secrets", () => {
    /** 32 bytes that decode from a placeholder, so the value passes the length and base64 checks. */
    const placeholderKey = Buffer.from("change-me-change-me-change-me-ch").toString("base64");

    it.each([
      ["LEADGATE_BOOTSTRAP_OPERATOR_KEY", "change-me"],
      ["LEADGATE_BOOTSTRAP_OPERATOR_KEY", "change-me-to-a-long-random-key"],
      ["LEADGATE_BOOTSTRAP_OPERATOR_KEY", "CHANGE_ME_CHANGE_ME_CHANGE_ME"],
      ["LEADGATE_BOOTSTRAP_OPERATOR_KEY", "x".repeat(32)],
      ["METRICS_TOKEN", "changeme-metrics-token"],
      ["METRICS_TOKEN", "<placeholder-metrics-token>"],
      ["METRICS_TOKEN", "0".repeat(16)],
      ["YELP_WEBHOOK_TOKEN", "replace-me-with-the-yelp-token"],
      ["LEADGATE_ENCRYPTION_KEY", "changemechangemechangemechangemechangemecha="],
      ["LEADGATE_ENCRYPTION_KEY", placeholderKey],
      ["LEADGATE_PREVIOUS_ENCRYPTION_KEYS", `${KEY},${placeholderKey}`],
    ])("refuses a placeholder %s (%s) without echoing it", (variable, value) => {
      const error = errorOf({ ...BASE, [variable]: value });
      expect(error.variable).toBe(variable);
      expect(error.message).toMatch(new RegExp(`^${variable} is a placeholder`));
      expect(error.message).not.toContain(value);
      expect(error.message.split("\n")).toHaveLength(1);
    });

    it("a production process refuses a key of one repeated byte (all zeros); tests and benches may use one", () => {
      const zeros = Buffer.alloc(32).toString("base64");
      const production = { ...BASE, NODE_ENV: "production", PUBLIC_BASE_URL: "https://leadgate.example.com" };
      for (const [variable, value] of [
        ["LEADGATE_ENCRYPTION_KEY", zeros],
        ["LEADGATE_ENCRYPTION_KEY", Buffer.alloc(32, 9).toString("base64")],
        ["LEADGATE_PREVIOUS_ENCRYPTION_KEYS", zeros],
      ]) {
        const error = errorOf({ ...production, [variable!]: value });
        expect([error.variable, error.message]).toEqual([
          variable,
          expect.stringContaining("one byte repeated"),
        ]);
      }
      expect(appConfig({ ...BASE, LEADGATE_ENCRYPTION_KEY: zeros }).encryptionKey).toEqual(Buffer.alloc(32));
      expect(() => appConfig({ ...production })).not.toThrow();
    });

    it("accepts generated values (the shapes scripts/keys.mjs writes)", () => {
      const config = appConfig({
        ...BASE,
        LEADGATE_ENCRYPTION_KEY: "q4mF0Zb3K5v8fJ2Xy1Tn7Lw9Rs6Ud0Pe3Ga8Hc5Ji4k=",
        LEADGATE_BOOTSTRAP_OPERATOR_KEY: "lg_3f9a0c7d21be_Zq3v8Yt1Nw6Kp2Rf9Xs4Lm7Hc0Jd5Ga3Ub8Ve1Ti6Qo",
        METRICS_TOKEN: "Hc0Jd5Ga3Ub8Ve1Ti6Qo2PkZq3v8Yt1Nw6Kp2Rf9Xs4",
      });
      expect(config.bootstrapOperatorKey).toMatch(/^lg_/);
      expect(config.metricsToken).toHaveLength(43);
    });
  });
});
