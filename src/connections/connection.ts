import type { Provider } from "../providers/provider-event.js";
import type { InboundAuthType } from "../providers/inbound-auth.js";

export const CONNECTION_STATUSES = ["active", "paused", "credential_error", "disabled"] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];

/** The provider grant of a connection (api.md "Connection views gain"). */
export const OAUTH_STATUSES = ["connected", "reauthorization_required", "not_connected"] as const;
export type OAuthStatus = (typeof OAUTH_STATUSES)[number];

/** Provider API credentials as stored (encrypted): pasted, or granted through OAuth. */
export interface ProviderCredentials {
  accessToken: string;
  refreshToken?: string;
  /** ISO 8601 expiry of the access token, when known. */
  expiresAt?: string;
  scopes?: string[];
}

export interface ConnectionSettings {
  autoResponse?: { enabled: boolean; text: string };
  crmDestination?: { url: string };
}

/** The non-secret part of inbound auth, stored in clear: which type, and the header's name. */
export interface InboundAuthConfig {
  type: InboundAuthType;
  headerName?: string;
}

export interface NewConnection {
  provider: Provider;
  externalAccountId: string;
  displayName: string;
  inboundAuth: { type: InboundAuthType; headerName?: string; apiKey?: string };
  credentials?: ProviderCredentials;
  settings?: ConnectionSettings;
}
