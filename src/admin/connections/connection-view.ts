import type {
  ConnectionSettings,
  ConnectionStatus,
  InboundAuthConfig,
  OAuthStatus,
} from "../../connections/lifecycle/connection.js";
import type { RegistrationStatus } from "../../connections/registration.js";
import { maskQuery } from "../../common/masked-url.js";
import type { Connection } from "../../generated/prisma/client.js";
import { capabilities } from "../../providers/capabilities.js";
import type { Provider } from "../../providers/provider-event.js";
import {
  type EffectiveSettings,
  effectiveSettings,
  type ReplySettings,
} from "../../replies/reply-settings.js";

/** What is weak in a connection's setup: `apiKey_only`: its only sender secret is in the public form. */
export type ConnectionWarning = "apiKey_only";

/** A connection as the admin API shows it: configuration and state, never a secret. */
export interface ConnectionView {
  id: string;
  tenantId: string;
  provider: Provider;
  externalAccountId: string;
  displayName: string;
  status: ConnectionStatus;
  /** The webhook URL without its `?token=` secret. */
  webhookUrl: string;
  inboundAuth: InboundAuthConfig;
  hasCredentials: boolean;
  /** The provider grant, never a token (api.md "Connection views gain"). */
  oauth: OAuthView;
  /** The provider-side webhook or subscription (api.md "Connection views gain"). */
  registration: RegistrationView;
  /** Reconciliation with the provider's list of leads (api.md "Connection views gain"). */
  reconciliation: ReconciliationView;
  settings: ConnectionSettings;
  /** The reply settings in force: the connection's own, else its tenant's defaults, else built in (api.md "Inheritance"). */
  effectiveSettings: EffectiveSettings;
  /** Until when the secret replaced by the last rotation is still accepted (null: not at all). */
  previousSecretExpiresAt: Date | null;
  /** Until when CRM deliveries also carry the signature of the secret rotate-crm-secret replaced. */
  previousCrmSigningSecretExpiresAt: Date | null;
  warnings: ConnectionWarning[];
  createdAt: Date;
  updatedAt: Date;
  disabledAt: Date | null;
}

export interface OAuthView {
  status: OAuthStatus;
  scopes: string[];
  tokenExpiresAt: Date | null;
  lastRefreshedAt: Date | null;
  /** A code (e.g. `invalid_grant`), never a provider's message. */
  lastError: string | null;
}

export interface RegistrationView {
  /** `manual`: registered by hand (pasted credentials, Static Forms, Thumbtack header auth). */
  status: RegistrationStatus;
  /** The provider's id of our webhook (Thumbtack webhookID, Yelp self-serve webhook_id); null for Yelp subscriptions. */
  providerWebhookId: string | null;
  /** When the provider expires it (Yelp self-serve; renewed before). */
  expiresAt: Date | null;
  /** The last successful registration call. */
  lastSyncedAt: Date | null;
  /** A code (e.g. `http_500`), never a provider's message. */
  lastError: string | null;
}

export interface ReconciliationView {
  /** manual: the provider has no list of leads (Static Forms, Thumbtack's list answering 404) or no API token. */
  status: "active" | "manual" | "error";
  lastRunAt: Date | null;
  /** Leads of the last run's window the provider listed. */
  leadsFound: number;
  /** Of those, leads no webhook had delivered within the grace period (stored by the run). */
  missedByWebhooks: number;
  /** A code (e.g. `negotiations_endpoint_not_found`, `http_500`), never a provider's message. */
  lastError: string | null;
}

function reconciliationView(row: Connection): ReconciliationView {
  const noApi = !capabilities(row.provider as Provider).api || row.credentials === null;
  const stored = row.reconcileStatus as ReconciliationView["status"] | null;
  return {
    status: noApi ? "manual" : (stored ?? "active"),
    lastRunAt: row.reconcileLastRunAt,
    leadsFound: row.reconcileLeadsFound,
    missedByWebhooks: row.reconcileMissed,
    lastError: row.reconcileLastError,
  };
}

/** The settings as shown: a CRM URL's query string (it may hold a token) masked. */
function shownSettings(settings: ConnectionSettings): ConnectionSettings {
  const crm = settings.crmDestination;
  return crm ? { ...settings, crmDestination: { ...crm, url: maskQuery(crm.url) } } : settings;
}

/** `tenantDefaults`: the connection's tenant's `defaults` (what it inherits). */
export function connectionView(
  row: Connection,
  webhookUrl: string,
  tenantDefaults: ReplySettings | null,
): ConnectionView {
  const now = new Date();
  const until = (secret: string | null, expires: Date | null) =>
    secret !== null && expires !== null && expires > now ? expires : null;
  const inboundAuth = row.inboundAuth as unknown as InboundAuthConfig;
  return {
    id: row.id,
    tenantId: row.tenantId,
    provider: row.provider as Provider,
    externalAccountId: row.externalAccountId,
    displayName: row.displayName,
    status: row.status as ConnectionStatus,
    webhookUrl,
    inboundAuth,
    hasCredentials: row.credentials !== null,
    oauth: {
      status: row.oauthStatus as OAuthStatus,
      scopes: row.oauthScopes,
      tokenExpiresAt: row.tokenExpiresAt,
      lastRefreshedAt: row.lastRefreshedAt,
      lastError: row.oauthLastError,
    },
    registration: {
      status: row.registrationStatus as RegistrationStatus,
      providerWebhookId: row.registrationWebhookId,
      expiresAt: row.registrationExpiresAt,
      lastSyncedAt: row.registrationSyncedAt,
      lastError: row.registrationLastError,
    },
    reconciliation: reconciliationView(row),
    settings: shownSettings(row.settings as ConnectionSettings),
    effectiveSettings: effectiveSettings(row.settings as ConnectionSettings, tenantDefaults),
    previousSecretExpiresAt: until(row.previousSecrets, row.previousSecretsExpireAt),
    previousCrmSigningSecretExpiresAt: until(row.previousCrmSecret, row.previousCrmExpireAt),
    // Static Forms puts the apiKey in the public HTML form: anyone can read it there (README, Secrets).
    warnings: inboundAuth.type === "apiKey" ? ["apiKey_only"] : [],
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    disabledAt: row.disabledAt,
  };
}
