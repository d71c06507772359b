// Configuration: every variable of api.md's "Running" table, parsed and validated once at boot
// (a provider's own variables by its plugin: provider-config.ts).
// A missing or malformed value throws a ConfigError whose message is one line naming the variable;
// secret values are never echoed.
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { ConfigError, type Env, flag, integer, oneOf, read, url } from "./env.js";
import {
  oauthClients,
  type OAuthClientConfig,
  type ProviderConfigSpec,
  type ProviderRateLimit,
  providerRateLimits,
  providerSections,
} from "./provider-config.js";
import { type RedisTopology, redisTopology } from "./redis-topology.js";
import { encryptionKey, previousEncryptionKeys, secret } from "./secrets.js";

export { ConfigError } from "./env.js";
export type { OAuthClientConfig, ProviderConfigSpec, ProviderRateLimit } from "./provider-config.js";
export type { RedisNode, RedisTopology } from "./redis-topology.js";

export interface AppConfig {
  databaseUrl: string;
  /**
   * An optional streaming replica of DATABASE_URL for admin lists and reports only
   * (src/database/read-replica.ts); undefined: every read goes to the primary.
   */
  databaseReplicaUrl: string | undefined;
  /** The server, or with Sentinel only its password, TLS (`rediss:`) and database. */
  redisUrl: string;
  /** One server (REDIS_URL) or the master a set of Sentinels elects. */
  redisTopology: RedisTopology;
  redisPrefix: string;
  port: number;
  publicBaseUrl: string;
  /** 32-byte AES-256-GCM key for secrets and provider credentials at rest. */
  encryptionKey: Buffer;
  /** Keys being rotated out: still open existing envelopes until `npm run secrets:reencrypt` has run. */
  previousEncryptionKeys: Buffer[];
  bootstrapOperatorKey: string | undefined;
  payloadRetentionDays: number;
  receiptRetentionDays: number;
  /** A lead's messages are dropped (with their month) once the lead has been quiet this long. */
  messageRetentionDays: number;
  /** Audit entries are dropped (with their month) after this. */
  auditRetentionDays: number;
  /** The worker serves its Prometheus metrics on this port (unset: no HTTP port at all). */
  workerMetricsPort: number | undefined;
  /** The address the worker's metrics port binds to (loopback unless an operator opens it). */
  workerMetricsHost: string;
  /** When set, `/metrics` (API and worker) wants `Authorization: Bearer <token>`. */
  metricsToken: string | undefined;
  /** A request (headers and body) must arrive within this, or it is answered 408 and the socket closed. */
  httpRequestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  httpKeepAliveTimeoutMs: number;
  /** Failed authentications per client IP per minute before that IP's failures answer 429 (0: no limit). */
  preauthFailureLimit: number;
  /** Deliveries waiting in memory for their receipt write; more answer 503 with Retry-After. */
  ingestQueueLimit: number;
  /** How often the worker runs retention. */
  retentionIntervalMinutes: number;
  webhookBodyLimitBytes: number;
  /** Deliveries accepted per connection per window (0: no limit); more answer 429. */
  webhookRateLimit: number;
  webhookRateLimitWindowSeconds: number;
  /** Base of the jobs' exponential backoff (1 s, 5 s, 25 s, ... with the default 1000). */
  jobBackoffBaseMs: number;
  /** A side-effect call (provider API, CRM) taking longer is abandoned: its outcome is unknown. */
  sideEffectTimeoutMs: number;
  /** How often the worker's dispatcher looks for due jobs that are not in BullMQ. */
  dispatcherIntervalMs: number;
  /**
   * Whether the listening worker runs committed jobs itself while it has slots free (JobRunner.runHere);
   * false: it hands every one to BullMQ, so that even a light load spreads over all workers.
   */
  dispatcherRunsJobs: boolean;
  /**
   * How long a job run here (released by a success, or heard of at its commit by a worker alone)
   * waits for a slot of its operation; none when the runs in flight are all older (they are slow).
   * Past it the job goes to BullMQ.
   */
  releasedRunWaitMs: number;
  /** A job `waiting` longer than this is dead with wait_expired. */
  jobMaxWaitSeconds: number;
  /** Bulk replays re-queue at most this many jobs per second (so a replay cannot flood destinations). */
  replayRatePerSecond: number;
  /** Calls one worker makes at once to one destination (an origin); undefined: half the operation's concurrency. */
  destinationMaxConcurrency: number | undefined;
  /** Consecutive failures (timeouts, connection errors, 5xx) that open a destination's circuit. */
  circuitFailureThreshold: number;
  /** How long an open circuit waits before a probe call tries the destination again. */
  circuitProbeSeconds: number;
  /** Admin API requests per API key per minute; more answer 429. */
  adminRateLimit: number;
  /** Admin API requests per tenant per minute, across its keys (operator keys are no tenant's); more answer 429. */
  adminTenantRateLimit: number;
  /**
   * Admin list and report reads (the searches among them) one tenant runs at once in one API process,
   * on its admin pool of 4 (operators: per key or user); more wait up to 2 s for one to end, then 429.
   */
  adminReadsPerTenant: number;
  /** Active (non-revoked) API keys a tenant may have; one more is 422 limit_reached. */
  maxApiKeysPerTenant: number;
  /** Which proxies' X-Forwarded-For to believe (for client addresses): none, a hop count, or addresses/CIDRs. */
  trustProxy: false | number | string[];
  /** `http://` tenant-set outbound URLs (CRM destinations) are allowed; otherwise https only. */
  destinationAllowHttp: boolean;
  /** CIDRs outbound destinations may resolve to although private, loopback or link-local. */
  destinationAllowCidrs: string[];
  /** OAuth clients by provider; a provider without a client id has no OAuth routes (501 oauth_not_configured). */
  oauth: Readonly<Record<string, OAuthClientConfig>>;
  /** Origins a `returnUrl` of the OAuth flow may point to (scheme, host, port). */
  oauthReturnUrlOrigins: string[];
  /** A provider token is refreshed before a call when less than this (or half its lifetime) remains. */
  oauthRefreshMarginSeconds: number;
  /** Budgets of outbound provider API calls, shared by every tenant and worker (PROVIDER_RATE_LIMITS). */
  providerRateLimits: Readonly<Record<string, ProviderRateLimit>>;
  /** Each provider's own variables, parsed by its plugin (`src/providers/<name>/<name>.config.ts`), by id. */
  providerSections: Readonly<Record<string, object>>;
  /** The SMTP server of `email` notification channels (smtp: or smtps: URL); undefined: no email channels. */
  smtpUrl: string | undefined;
  /** The sender of alert emails. */
  alertEmailFrom: string | undefined;
  /** Notification channels a tenant may have (platform channels are no tenant's); one more is 422 limit_reached. */
  maxChannelsPerTenant: number;
  /** How often the worker's lead.unanswered sweep looks for leads past their response target. */
  unansweredSweepSeconds: number;
  /** The least severe lines written (LOG_LEVEL): `info` leaves out each job's success (`debug`). */
  logLevel: LogLevel;
  /** Every registered connection is re-synced with its provider at least this often (at most daily). */
  registrationSyncIntervalSeconds: number;
  /** Live (not disabled) connections a tenant may have; one more is 422 limit_reached. */
  maxConnectionsPerTenant: number;
  /** Clients (not deleted) a tenant may have; one more is 422 limit_reached. */
  maxClientsPerTenant: number;
  /** Console users a tenant may have, pending or not (disabled ones do not count); one more is 422 limit_reached. */
  maxUsersPerTenant: number;
  /** Each connection is reconciled once per this period, at an offset of its own (RECONCILE_INTERVAL_SECONDS). */
  reconcileIntervalSeconds: number;
  /** A lead found only by reconciliation or backfill whose event is older than this gets no auto-response. */
  reconcileReplyMaxAgeSeconds: number;
  /** Reconciliation runs one worker process runs at once (RECONCILE_CONCURRENCY). */
  reconcileConcurrency: number;
  /** A lead younger than this is left to its webhook (still in flight); older and unknown, it was missed. */
  reconcileGraceSeconds: number;
  /** How far back a reconciliation looks (never before the connection was made). */
  reconcileLookbackSeconds: number;
  /** The longest window one backfill may cover. */
  backfillMaxDays: number;
}

export const LOG_LEVELS = ["error", "warn", "info", "debug"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

function ipAddress(env: Env, name: string, fallback: string): string {
  const value = read(env, name) ?? fallback;
  if (isIP(value) === 0) throw new ConfigError(name, `must be an IP address (got "${value}")`);
  return value;
}

function redisPrefix(env: Env): string {
  const value = read(env, "REDIS_PREFIX") ?? "leadgate";
  if (!/^[A-Za-z0-9_{}.-]{1,64}$/.test(value)) {
    throw new ConfigError("REDIS_PREFIX", "may hold only letters, digits, _ . - { } (at most 64)");
  }
  // On a cluster each queue's hash tag is `{<prefix>.<queue>}`: a brace in the prefix would end it
  // early and put every queue in one slot.
  if (read(env, "REDIS_CLUSTER_NODES") !== undefined && /[{}]/.test(value)) {
    throw new ConfigError(
      "REDIS_PREFIX",
      "may not hold { } with REDIS_CLUSTER_NODES (Leadgate adds the hash tags)",
    );
  }
  return value;
}

function trustProxy(env: Env): false | number | string[] {
  const value = read(env, "TRUST_PROXY");
  if (value === undefined) return false;
  if (/^\d{1,2}$/.test(value)) return Number(value);
  const entries = value.split(",").map((entry) => entry.trim());
  const bad = entries.find((entry) => isIP(entry.split("/")[0] ?? "") === 0);
  if (bad !== undefined) {
    throw new ConfigError(
      "TRUST_PROXY",
      `must be a hop count or a comma-separated list of proxy IPs/CIDRs (got "${bad}")`,
    );
  }
  return entries;
}

function cidrList(env: Env, name: string): string[] {
  const value = read(env, name);
  if (value === undefined) return [];
  const cidrs = value.split(",").map((cidr) => cidr.trim());
  const bad = cidrs.find((cidr) => !ipaddr.isValidCIDR(cidr));
  if (bad !== undefined) {
    throw new ConfigError(name, `must be a comma-separated list of CIDRs such as 10.0.0.0/8 (got "${bad}")`);
  }
  return cidrs;
}

function originList(env: Env, name: string): string[] {
  const value = read(env, name);
  if (value === undefined) return [];
  return value.split(",").map((entry) => {
    let parsed: URL;
    try {
      parsed = new URL(entry.trim());
    } catch {
      throw new ConfigError(
        name,
        `must be a comma-separated list of origins such as https://app.example.com`,
      );
    }
    if (!["https:", "http:"].includes(parsed.protocol) || parsed.origin === "null") {
      throw new ConfigError(name, `must list http(s) origins (got ${parsed.protocol})`);
    }
    return parsed.origin;
  });
}

/** A plain address (`alerts@example.com`) or a display form (`Leadgate <alerts@example.com>`). */
function emailAddress(env: Env, name: string): string | undefined {
  const value = read(env, name);
  if (value === undefined) return undefined;
  if (!/^([^<>\r\n]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/.test(value)) {
    throw new ConfigError(
      name,
      "must be an email address, e.g. alerts@example.com or Leadgate <alerts@example.com>",
    );
  }
  return value;
}

/**
 * PUBLIC_BASE_URL goes into the webhook URLs providers call, OAuth redirect URIs and the console's
 * cookies (Secure only on https). A production process (NODE_ENV=production, as the image sets it)
 * refuses http:// unless ALLOW_INSECURE_PUBLIC_URL=true says the operator means it.
 */
function publicBaseUrl(env: Env, port: number): string {
  const value = url(env, "PUBLIC_BASE_URL", `http://localhost:${port}`, ["https:", "http:"]);
  const parsed = new URL(value);
  const allowInsecure = flag(env, "ALLOW_INSECURE_PUBLIC_URL");
  if (read(env, "NODE_ENV") === "production" && parsed.protocol === "http:" && !allowInsecure) {
    const given = read(env, "PUBLIC_BASE_URL") === undefined ? "unset, so" : "got";
    throw new ConfigError(
      "PUBLIC_BASE_URL",
      `must be https:// when NODE_ENV=production (${given} ${parsed.origin}): put TLS in front, or set ALLOW_INSECURE_PUBLIC_URL=true`,
    );
  }
  return value;
}

/** The local Postgres (api.md: DATABASE_URL defaults to the local service). */
const LOCAL_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/leadgate";

/**
 * The configuration from `env`, with the variables of each provider in `providers` (the plugins'
 * list, which the entry points pass: src/app-config.ts).
 */
export function loadConfig(env: Env, providers: readonly ProviderConfigSpec[]): AppConfig {
  const port = integer(env, "PORT", 3000, 0, 65535);
  const adminRateLimit = integer(env, "ADMIN_RATE_LIMIT", 1200, 1, 10_000_000);
  return {
    databaseUrl: url(env, "DATABASE_URL", LOCAL_DATABASE_URL, ["postgresql:", "postgres:"]),
    databaseReplicaUrl:
      read(env, "DATABASE_REPLICA_URL") === undefined
        ? undefined
        : url(env, "DATABASE_REPLICA_URL", "", ["postgresql:", "postgres:"]),
    redisUrl: url(env, "REDIS_URL", "redis://127.0.0.1:6379", ["redis:", "rediss:"]),
    redisTopology: redisTopology(env),
    redisPrefix: redisPrefix(env),
    port,
    publicBaseUrl: publicBaseUrl(env, port),
    encryptionKey: encryptionKey(env),
    previousEncryptionKeys: previousEncryptionKeys(env),
    bootstrapOperatorKey: secret(env, "LEADGATE_BOOTSTRAP_OPERATOR_KEY", 24),
    payloadRetentionDays: integer(env, "PAYLOAD_RETENTION_DAYS", 30, 1, 36500),
    receiptRetentionDays: integer(env, "RECEIPT_RETENTION_DAYS", 400, 1, 36500),
    messageRetentionDays: integer(env, "MESSAGE_RETENTION_DAYS", 400, 1, 36500),
    auditRetentionDays: integer(env, "AUDIT_RETENTION_DAYS", 730, 1, 36500),
    retentionIntervalMinutes: integer(env, "RETENTION_INTERVAL_MINUTES", 60, 1, 10_080),
    workerMetricsPort:
      read(env, "WORKER_METRICS_PORT") === undefined
        ? undefined
        : integer(env, "WORKER_METRICS_PORT", 0, 1, 65535),
    workerMetricsHost: ipAddress(env, "WORKER_METRICS_HOST", "127.0.0.1"),
    metricsToken: secret(env, "METRICS_TOKEN", 16),
    httpRequestTimeoutMs: integer(env, "HTTP_REQUEST_TIMEOUT_MS", 30_000, 500, 600_000),
    httpKeepAliveTimeoutMs: integer(env, "HTTP_KEEP_ALIVE_TIMEOUT_MS", 72_000, 1_000, 600_000),
    preauthFailureLimit: integer(env, "PREAUTH_FAILURE_LIMIT", 300, 0, 1_000_000),
    ingestQueueLimit: integer(env, "INGEST_QUEUE_LIMIT", 2_000, 1, 1_000_000),
    webhookBodyLimitBytes: integer(env, "WEBHOOK_BODY_LIMIT_BYTES", 262144, 1024, 64 * 1024 * 1024),
    webhookRateLimit: integer(env, "WEBHOOK_RATE_LIMIT", 12_000, 0, 10_000_000),
    webhookRateLimitWindowSeconds: integer(env, "WEBHOOK_RATE_LIMIT_WINDOW_SECONDS", 60, 1, 86_400),
    trustProxy: trustProxy(env),
    jobBackoffBaseMs: integer(env, "JOB_BACKOFF_BASE_MS", 1000, 1, 600_000),
    sideEffectTimeoutMs: integer(env, "SIDE_EFFECT_TIMEOUT_MS", 15_000, 100, 300_000),
    dispatcherIntervalMs: integer(env, "DISPATCHER_INTERVAL_MS", 5_000, 100, 3_600_000),
    dispatcherRunsJobs: flag(env, "DISPATCHER_RUNS_JOBS", true),
    releasedRunWaitMs: integer(env, "RELEASED_RUN_WAIT_MS", 500, 0, 60_000),
    jobMaxWaitSeconds: integer(env, "JOB_MAX_WAIT_SECONDS", 86_400, 1, 30 * 86_400),
    replayRatePerSecond: integer(env, "REPLAY_RATE_PER_SECOND", 20, 1, 10_000),
    destinationAllowHttp: flag(env, "DESTINATION_ALLOW_HTTP"),
    destinationAllowCidrs: cidrList(env, "DESTINATION_ALLOW_CIDRS"),
    oauth: oauthClients(env, providers),
    oauthReturnUrlOrigins: originList(env, "OAUTH_RETURN_URL_ORIGINS"),
    oauthRefreshMarginSeconds: integer(env, "OAUTH_REFRESH_MARGIN_SECONDS", 300, 0, 86_400),
    providerRateLimits: providerRateLimits(env, providers),
    providerSections: providerSections(env, providers),
    destinationMaxConcurrency:
      read(env, "DESTINATION_MAX_CONCURRENCY") === undefined
        ? undefined
        : integer(env, "DESTINATION_MAX_CONCURRENCY", 0, 1, 10_000),
    circuitFailureThreshold: integer(env, "CIRCUIT_FAILURE_THRESHOLD", 10, 1, 100_000),
    circuitProbeSeconds: integer(env, "CIRCUIT_PROBE_SECONDS", 30, 1, 86_400),
    adminRateLimit,
    adminTenantRateLimit: integer(env, "ADMIN_TENANT_RATE_LIMIT", 5 * adminRateLimit, 1, 50_000_000),
    adminReadsPerTenant: integer(env, "ADMIN_READS_PER_TENANT", 2, 1, 100),
    maxApiKeysPerTenant: integer(env, "MAX_API_KEYS_PER_TENANT", 50, 1, 100_000),
    smtpUrl: read(env, "SMTP_URL") === undefined ? undefined : url(env, "SMTP_URL", "", ["smtp:", "smtps:"]),
    alertEmailFrom: emailAddress(env, "ALERT_EMAIL_FROM"),
    maxChannelsPerTenant: integer(env, "MAX_CHANNELS_PER_TENANT", 20, 1, 10_000),
    maxConnectionsPerTenant: integer(env, "MAX_CONNECTIONS_PER_TENANT", 200, 1, 100_000),
    maxClientsPerTenant: integer(env, "MAX_CLIENTS_PER_TENANT", 200, 1, 100_000),
    maxUsersPerTenant: integer(env, "MAX_USERS_PER_TENANT", 100, 1, 100_000),
    unansweredSweepSeconds: integer(env, "UNANSWERED_SWEEP_SECONDS", 60, 1, 3600),
    logLevel: oneOf(env, "LOG_LEVEL", LOG_LEVELS, "info"),
    registrationSyncIntervalSeconds: integer(env, "REGISTRATION_SYNC_INTERVAL_SECONDS", 86_400, 60, 86_400),
    reconcileIntervalSeconds: integer(env, "RECONCILE_INTERVAL_SECONDS", 900, 10, 7 * 86_400),
    reconcileReplyMaxAgeSeconds: integer(env, "RECONCILE_REPLY_MAX_AGE_SECONDS", 3600, 0, 30 * 86_400),
    reconcileConcurrency: integer(env, "RECONCILE_CONCURRENCY", 4, 1, 1_000),
    reconcileGraceSeconds: integer(env, "RECONCILE_GRACE_SECONDS", 300, 0, 86_400),
    reconcileLookbackSeconds: integer(env, "RECONCILE_LOOKBACK_SECONDS", 86_400, 60, 30 * 86_400),
    backfillMaxDays: integer(env, "BACKFILL_MAX_DAYS", 90, 1, 3650),
  };
}
