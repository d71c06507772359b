import type { Provider } from "../providers/provider-event.js";
import type { InboundAuthType } from "../providers/inbound-auth.js";

export const CONNECTION_STATUSES = ["active", "paused", "credential_error", "disabled"] as const;
export type ConnectionStatus = (typeof CONNECTION_STATUSES)[number];

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
  credentials?: { accessToken: string; refreshToken?: string };
  settings?: ConnectionSettings;
}
