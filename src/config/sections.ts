// The configuration, split into the sections modules receive: each module injects only the
// section(s) it needs (`@Inject(CONFIG.jobs) config: JobsConfig`), never the whole AppConfig, which
// only the entry points and the boot check see. Every variable belongs to exactly one section: a
// setting without one does not compile (and config.spec.ts checks none is in two).
import type { AppConfig } from "./config.js";

export const CONFIG_SECTIONS = {
  database: ["databaseUrl", "databaseReplicaUrl"],
  redis: ["redisUrl", "redisTopology", "redisPrefix"],
  http: ["port", "publicBaseUrl", "httpRequestTimeoutMs", "httpKeepAliveTimeoutMs", "trustProxy"],
  crypto: ["encryptionKey", "previousEncryptionKeys"],
  auth: [
    "bootstrapOperatorKey",
    "adminRateLimit",
    "adminTenantRateLimit",
    "adminReadsPerTenant",
    "maxApiKeysPerTenant",
    "preauthFailureLimit",
  ],
  ingest: ["webhookBodyLimitBytes", "webhookRateLimit", "webhookRateLimitWindowSeconds", "ingestQueueLimit"],
  // Each provider's own variables also under its own token (config.module.ts: providerConfigToken).
  providers: ["providerRateLimits", "providerSections"],
  jobs: [
    "reconcileConcurrency",
    "jobBackoffBaseMs",
    "sideEffectTimeoutMs",
    "dispatcherIntervalMs",
    "dispatcherRunsJobs",
    "releasedRunWaitMs",
    "jobMaxWaitSeconds",
    "replayRatePerSecond",
  ],
  outbound: [
    "destinationMaxConcurrency",
    "circuitFailureThreshold",
    "circuitProbeSeconds",
    "destinationAllowHttp",
    "destinationAllowCidrs",
  ],
  oauth: ["oauth", "oauthReturnUrlOrigins", "oauthRefreshMarginSeconds"],
  connections: ["registrationSyncIntervalSeconds", "maxConnectionsPerTenant", "maxClientsPerTenant"],
  users: ["maxUsersPerTenant"],
  reconciliation: [
    "reconcileIntervalSeconds",
    "reconcileReplyMaxAgeSeconds",
    "reconcileGraceSeconds",
    "reconcileLookbackSeconds",
    "backfillMaxDays",
  ],
  alerts: ["smtpUrl", "alertEmailFrom", "maxChannelsPerTenant", "unansweredSweepSeconds"],
  retention: [
    "payloadRetentionDays",
    "receiptRetentionDays",
    "messageRetentionDays",
    "auditRetentionDays",
    "retentionIntervalMinutes",
  ],
  observability: ["workerMetricsPort", "workerMetricsHost", "metricsToken", "logLevel"],
} as const satisfies Record<string, readonly (keyof AppConfig)[]>;

export type SectionName = keyof typeof CONFIG_SECTIONS;
export type ConfigSection<S extends SectionName> = Readonly<
  Pick<AppConfig, (typeof CONFIG_SECTIONS)[S][number]>
>;

// Every variable of AppConfig is in a section: `Unsectioned` names any that is not, and fails here.
type Unsectioned = Exclude<keyof AppConfig, (typeof CONFIG_SECTIONS)[SectionName][number]>;
const everyVariableHasASection: [Unsectioned] extends [never] ? true : Unsectioned = true;
void everyVariableHasASection;

export type DatabaseConfig = ConfigSection<"database">;
export type RedisConfig = ConfigSection<"redis">;
export type HttpConfig = ConfigSection<"http">;
export type CryptoConfig = ConfigSection<"crypto">;
export type AuthConfig = ConfigSection<"auth">;
export type IngestConfig = ConfigSection<"ingest">;
export type ProvidersConfig = ConfigSection<"providers">;
export type JobsConfig = ConfigSection<"jobs">;
export type OutboundConfig = ConfigSection<"outbound">;
export type OAuthConfig = ConfigSection<"oauth">;
export type ConnectionsConfig = ConfigSection<"connections">;
export type UsersConfig = ConfigSection<"users">;
export type ReconciliationConfig = ConfigSection<"reconciliation">;
export type AlertsConfig = ConfigSection<"alerts">;
export type RetentionConfig = ConfigSection<"retention">;
export type ObservabilityConfig = ConfigSection<"observability">;

/** The injection token of each section. */
export const CONFIG = Object.fromEntries(
  Object.keys(CONFIG_SECTIONS).map((name) => [name, Symbol(`config:${name}`)]),
) as Record<SectionName, symbol>;

/** The section `name` of a validated configuration: only its variables, frozen. */
export function section<S extends SectionName>(config: AppConfig, name: S): ConfigSection<S> {
  return Object.freeze(
    Object.fromEntries(CONFIG_SECTIONS[name].map((key) => [key, config[key]])),
  ) as ConfigSection<S>;
}
