// A connection's provider-side webhook registration as stored (api.md `registration`): which
// connections are registered by Leadgate, and what a provider-sync job reads of it. Its outcome
// after a provider call is recorded by the store (ConnectionSubstates.recordRegistration).
import { Injectable } from "@nestjs/common";
import { PermanentError } from "../common/outbound/errors.js";
import { SecretBox } from "../crypto/secret-box.js";
import { secretPlace } from "../crypto/stored-secrets.js";
import { PrismaService } from "../database/prisma.service.js";
import type { InboundCredentials } from "../providers/inbound-auth.js";
import type { Provider } from "../providers/provider-event.js";
import type { KnownRegistration } from "../providers/provider-registration.js";
import type { RegistrationStatus } from "./lifecycle/connection-states.js";

export type { RegistrationStatus } from "./lifecycle/connection-states.js";

/** What a provider-sync job reads of its connection besides the job context. */
export interface RegistrationRow {
  status: RegistrationStatus;
  known: KnownRegistration;
  inbound: InboundCredentials;
}

@Injectable()
export class RegistrationRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly box: SecretBox,
  ) {}

  async read(tenantId: string, connectionId: string): Promise<RegistrationRow | undefined> {
    const { rows } = await this.prisma.pool.query<{
      status: RegistrationStatus;
      webhookId: string | null;
      expiresAt: Date | null;
      inboundSecrets: string | null;
      webhookUrl: string | null;
    }>(
      `SELECT registration_status AS status, registration_webhook_id AS "webhookId",
              registration_expires_at AS "expiresAt", inbound_secrets AS "inboundSecrets",
              registration_webhook_url AS "webhookUrl"
       FROM connections WHERE id = $1::uuid AND tenant_id = $2::uuid`,
      [connectionId, tenantId],
    );
    const row = rows[0];
    if (!row) return undefined;
    let inbound: InboundCredentials = { type: "none" };
    let webhookUrl: string | null = null;
    try {
      if (row.inboundSecrets) {
        inbound = this.box.open<InboundCredentials>(
          row.inboundSecrets,
          secretPlace("inbound_secrets", connectionId),
        );
      }
      if (row.webhookUrl) {
        webhookUrl = this.box.open<string>(
          row.webhookUrl,
          secretPlace("registration_webhook_url", connectionId),
        );
      }
    } catch {
      throw new PermanentError("secrets_unreadable"); // as in the job context: fix the key or data, then replay
    }
    return {
      status: row.status,
      known: { webhookId: row.webhookId, expiresAt: row.expiresAt, webhookUrl },
      inbound,
    };
  }

  /**
   * Of these provider accounts, those Leadgate holds only in disabled connections (a live
   * connection of the account keeps it). Platform-wide by nature: a provider account is not a tenant's.
   */
  async released(provider: Provider, accountIds: string[]): Promise<string[]> {
    const { rows } = await this.prisma.pool.query<{ id: string }>(
      `SELECT external_account_id AS id FROM connections
       WHERE provider = $1 AND external_account_id = ANY($2::text[])
       GROUP BY external_account_id HAVING bool_and(status = 'disabled')`,
      [provider, accountIds],
    );
    return rows.map((row) => row.id);
  }
}
