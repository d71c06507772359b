// The shapes of a connection's stored parts (its lifecycle: connection-states.ts).
import type { Provider } from "../../providers/provider-event.js";
import type { InboundAuthType } from "../../providers/inbound-auth.js";
import { mergedBusinessHours } from "../../replies/business-hours.js";
import type { ReplySettings } from "../../replies/reply-settings.js";

export type { ConnectionStatus, OAuthStatus } from "./connection-states.js";

/** Provider API credentials as stored (encrypted): pasted, or granted through OAuth. */
export interface ProviderCredentials {
  accessToken: string;
  refreshToken?: string;
  /** ISO 8601 expiry of the access token, when known. */
  expiresAt?: string;
  scopes?: string[];
}

/**
 * A connection's own settings: the reply settings it sets (the others it inherits from its tenant's
 * `defaults`: src/replies/reply-settings.ts) and its CRM destination.
 */
export interface ConnectionSettings extends ReplySettings {
  crmDestination?: { url: string };
}

/** The non-secret part of inbound auth, stored in clear: which type, and the header's name. */
export interface InboundAuthConfig {
  type: InboundAuthType;
  headerName?: string;
}

export interface NewConnection {
  provider: Provider;
  /** The client it belongs to, of its tenant; absent: the tenant's first client. */
  clientId?: string;
  externalAccountId: string;
  displayName: string;
  inboundAuth: { type: InboundAuthType; headerName?: string; apiKey?: string };
  credentials?: ProviderCredentials;
  settings?: ConnectionSettings;
}

/**
 * Settings as stored: the removed (null) entries dropped (a `PATCH` with a field `null` removes it),
 * business hours with each day's touching ranges merged (api.md: counted and kept merged).
 */
export function settingsWithoutNulls(settings: object): ConnectionSettings {
  const kept: ConnectionSettings = Object.fromEntries(
    Object.entries(settings).filter(([, value]) => value != null),
  );
  if (kept.businessHours) kept.businessHours = mergedBusinessHours(kept.businessHours);
  return kept;
}
