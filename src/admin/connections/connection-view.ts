import { ApiProperty, ApiPropertyOptional } from "@nestjs/swagger";
import { NullableDate, NullableString } from "../../common/api-properties.js";
import type {
  ConnectionSettings,
  ConnectionStatus,
  InboundAuthConfig,
  OAuthStatus,
} from "../../connections/lifecycle/connection.js";
import {
  CONNECTION_STATUSES,
  OAUTH_STATUSES,
  REGISTRATION_STATUSES,
  type RegistrationStatus,
} from "../../connections/lifecycle/connection-states.js";
import { INBOUND_AUTH_TYPES, type InboundAuthType } from "../../providers/inbound-auth.js";
import type { BusinessHours } from "../../replies/business-hours.js";
import {
  AutoResponseBody,
  CrmDestinationBody,
  ResponseTargetBody,
} from "../../connections/connections.dto.js";
import { maskQuery } from "../../common/masked-url.js";
import type { Connection } from "../../generated/prisma/client.js";
import { capabilities } from "../../providers/capabilities.js";
import { PROVIDERS, type Provider } from "../../providers/provider-event.js";
import {
  type EffectiveSettings,
  effectiveSettings,
  type InheritedSettings,
  type ReplySetting,
  type ReplySettings,
  type SettingSource,
} from "../../replies/reply-settings.js";

const SOURCES: SettingSource[] = ["connection", "client", "tenant", "default"];

/** What is weak in a connection's setup: `apiKey_only`: its only sender secret is in the public form. */
export type ConnectionWarning = "apiKey_only";

export class InboundAuthView implements InboundAuthConfig {
  @ApiProperty({ enum: INBOUND_AUTH_TYPES })
  type!: InboundAuthType;

  @ApiPropertyOptional({ description: "the header a `header` connection reads" })
  headerName?: string;
}

/** `{ timezone, weekly: { mon: [["08:00","18:00"]], … } }`: an IANA zone and ranges per weekday. */
export class BusinessHoursView implements BusinessHours {
  @ApiProperty({ example: "America/New_York" })
  timezone!: string;

  @ApiProperty({
    type: "object",
    additionalProperties: {
      type: "array",
      items: { type: "array", items: { type: "string" }, minItems: 2, maxItems: 2 },
    },
    description: "per weekday (`mon` … `sun`): `[from, to]` ranges; `[]` or absent: closed",
  })
  weekly!: BusinessHours["weekly"];
}

/** The reply settings a connection sets itself (a tenant's `defaults` have the same shape). */
export class ReplySettingsView implements ReplySettings {
  @ApiPropertyOptional({ type: () => AutoResponseBody })
  autoResponse?: AutoResponseBody;

  @ApiPropertyOptional({ type: () => BusinessHoursView, description: "absent: always open" })
  businessHours?: BusinessHoursView;

  @ApiPropertyOptional({ type: () => ResponseTargetBody })
  responseTarget?: ResponseTargetBody;
}

export class ConnectionSettingsView extends ReplySettingsView implements ConnectionSettings {
  @ApiPropertyOptional({ type: () => CrmDestinationBody, description: "its URL's query string masked" })
  crmDestination?: CrmDestinationBody;
}

export class SettingSources implements Record<ReplySetting, SettingSource> {
  @ApiProperty({ enum: SOURCES })
  autoResponse!: SettingSource;

  @ApiProperty({ enum: SOURCES })
  businessHours!: SettingSource;

  @ApiProperty({ enum: SOURCES })
  responseTarget!: SettingSource;
}

/** The reply settings in force: the connection's own, else its tenant's defaults, else built in. */
export class EffectiveSettingsView implements EffectiveSettings {
  @ApiProperty({ type: () => AutoResponseBody, nullable: true })
  autoResponse!: AutoResponseBody | null;

  @ApiProperty({ type: () => BusinessHoursView, nullable: true, description: "null: always open" })
  businessHours!: BusinessHoursView | null;

  @ApiProperty({ type: () => ResponseTargetBody })
  responseTarget!: ResponseTargetBody;

  @ApiProperty({ type: () => SettingSources, description: "where each setting comes from" })
  source!: SettingSources;
}

/** The provider grant, never a token (api.md "Connection views gain"). */
export class OAuthView {
  @ApiProperty({ enum: OAUTH_STATUSES })
  status!: OAuthStatus;

  @ApiProperty({ type: String, isArray: true })
  scopes!: string[];

  @NullableDate()
  tokenExpiresAt!: Date | null;

  @NullableDate()
  lastRefreshedAt!: Date | null;

  @NullableString("a code (e.g. `invalid_grant`), never a provider's message")
  lastError!: string | null;
}

/** The provider-side webhook or subscription (api.md "Connection views gain"). */
export class RegistrationView {
  @ApiProperty({
    enum: REGISTRATION_STATUSES,
    description: "`manual`: registered by hand (pasted credentials, Static Forms, Thumbtack header auth)",
  })
  status!: RegistrationStatus;

  @NullableString("the provider's id of our webhook; null for Yelp subscriptions")
  providerWebhookId!: string | null;

  @NullableDate("when the provider expires it (Yelp self-serve; renewed before)")
  expiresAt!: Date | null;

  @NullableDate("the last successful registration call")
  lastSyncedAt!: Date | null;

  @NullableString("a code (e.g. `http_500`), never a provider's message")
  lastError!: string | null;
}

/** Reconciliation with the provider's list of leads (api.md "Connection views gain"). */
export class ReconciliationView {
  @ApiProperty({
    enum: ["active", "manual", "error"],
    description: "manual: the provider has no list of leads or the connection no API token",
  })
  status!: "active" | "manual" | "error";

  @NullableDate()
  lastRunAt!: Date | null;

  @ApiProperty({ description: "leads of the last run's window the provider listed" })
  leadsFound!: number;

  @ApiProperty({ description: "of those, leads no webhook had delivered within the grace period" })
  missedByWebhooks!: number;

  @NullableString("a code (e.g. `http_500`), never a provider's message")
  lastError!: string | null;
}

/** A connection as the admin API shows it: configuration and state, never a secret. */
export class ConnectionView {
  @ApiProperty({ format: "uuid" })
  id!: string;

  @ApiProperty({ format: "uuid" })
  tenantId!: string;

  @ApiProperty({ format: "uuid", description: "the client (business) it belongs to" })
  clientId!: string;

  @ApiProperty({ enum: PROVIDERS })
  provider!: Provider;

  @ApiProperty()
  externalAccountId!: string;

  @ApiProperty()
  displayName!: string;

  @ApiProperty({ enum: CONNECTION_STATUSES })
  status!: ConnectionStatus;

  @ApiProperty({ description: "the webhook URL without its `?token=` secret" })
  webhookUrl!: string;

  @ApiProperty({ type: () => InboundAuthView })
  inboundAuth!: InboundAuthView;

  @ApiProperty()
  hasCredentials!: boolean;

  @ApiProperty({ type: () => OAuthView })
  oauth!: OAuthView;

  @ApiProperty({ type: () => RegistrationView })
  registration!: RegistrationView;

  @ApiProperty({ type: () => ReconciliationView })
  reconciliation!: ReconciliationView;

  @ApiProperty({ type: () => ConnectionSettingsView })
  settings!: ConnectionSettingsView;

  @ApiProperty({ type: () => EffectiveSettingsView })
  effectiveSettings!: EffectiveSettingsView;

  @NullableDate("until when the secret replaced by the last rotation is still accepted")
  previousSecretExpiresAt!: Date | null;

  @NullableDate("until when CRM deliveries also carry the signature of the replaced CRM secret")
  previousCrmSigningSecretExpiresAt!: Date | null;

  @ApiProperty({ enum: ["apiKey_only"], isArray: true })
  warnings!: ConnectionWarning[];

  @ApiProperty()
  createdAt!: Date;

  @ApiProperty()
  updatedAt!: Date;

  @NullableDate()
  disabledAt!: Date | null;
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

/** `inherited`: its client's and its tenant's `defaults` (what it inherits). */
export function connectionView(
  row: Connection,
  webhookUrl: string,
  inherited: InheritedSettings,
): ConnectionView {
  const now = new Date();
  const until = (secret: string | null, expires: Date | null) =>
    secret !== null && expires !== null && expires > now ? expires : null;
  const inboundAuth = row.inboundAuth as unknown as InboundAuthConfig;
  return {
    id: row.id,
    tenantId: row.tenantId,
    clientId: row.clientId,
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
    effectiveSettings: effectiveSettings(row.settings as ConnectionSettings, inherited),
    previousSecretExpiresAt: until(row.previousSecrets, row.previousSecretsExpireAt),
    previousCrmSigningSecretExpiresAt: until(row.previousCrmSecret, row.previousCrmExpireAt),
    // Static Forms puts the apiKey in the public HTML form: anyone can read it there (README, Secrets).
    warnings: inboundAuth.type === "apiKey" ? ["apiKey_only"] : [],
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    disabledAt: row.disabledAt,
  };
}
