import type {
  ConnectionSettings,
  ConnectionStatus,
  InboundAuthConfig,
} from "../../connections/connection.js";
import type { Connection } from "../../generated/prisma/client.js";
import type { Provider } from "../../providers/provider-event.js";

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
  settings: ConnectionSettings;
  /** Until when the secret replaced by the last rotation is still accepted (null: not at all). */
  previousSecretExpiresAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  disabledAt: Date | null;
}

export function connectionView(row: Connection, webhookUrl: string): ConnectionView {
  const expires = row.previousSecretsExpireAt;
  return {
    id: row.id,
    tenantId: row.tenantId,
    provider: row.provider as Provider,
    externalAccountId: row.externalAccountId,
    displayName: row.displayName,
    status: row.status as ConnectionStatus,
    webhookUrl,
    inboundAuth: row.inboundAuth as unknown as InboundAuthConfig,
    hasCredentials: row.credentials !== null,
    settings: row.settings as ConnectionSettings,
    previousSecretExpiresAt: row.previousSecrets && expires && expires > new Date() ? expires : null,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    disabledAt: row.disabledAt,
  };
}
