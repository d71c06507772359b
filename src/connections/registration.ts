// A connection's provider-side webhook registration as stored (api.md `registration`): which
// connections are registered by Leadgate, the state the views show, and the one place where that
// state changes after a provider call (`recordOutcome`: `active`, `error`, or let go on removal).
import { Injectable, Logger } from "@nestjs/common";
import { PermanentError } from "../common/outbound/errors.js";
import { SecretBox } from "../crypto/secret-box.js";
import { secretPlace } from "../crypto/stored-secrets.js";
import { PrismaService } from "../database/prisma.service.js";
import type { InboundAuthType, InboundCredentials } from "../providers/inbound-auth.js";
import type { Provider } from "../providers/provider-event.js";
import type { KnownRegistration, Registered } from "../providers/provider-registration.js";

export const REGISTRATION_STATUSES = ["active", "pending", "error", "manual"] as const;
export type RegistrationStatus = (typeof REGISTRATION_STATUSES)[number];

/**
 * Whether Leadgate registers a connection's webhook itself, once it holds an OAuth grant: Yelp
 * always; Thumbtack for Basic credentials (given to Thumbtack) and `?token=` URLs (Thumbtack
 * sends no auth then). Thumbtack custom-header auth and Static Forms stay `manual`, as do
 * connections with pasted credentials (their owner registered the webhook by hand).
 */
export function registeredByLeadgate(provider: Provider, inboundAuth: InboundAuthType): boolean {
  switch (provider) {
    case "yelp":
      return true;
    case "thumbtack":
      return inboundAuth === "basic" || inboundAuth === "token";
    case "staticforms":
      return false;
  }
}

/** How a provider-sync attempt ended, for the connection's registration. */
export type RegistrationOutcome =
  | { kind: "registered"; registered: Registered }
  | { kind: "removed" }
  | { kind: "failed"; errorCode: string };

/** What a provider-sync job reads of its connection besides the job context. */
export interface RegistrationRow {
  status: RegistrationStatus;
  known: KnownRegistration;
  inbound: InboundCredentials;
}

@Injectable()
export class RegistrationRepository {
  private readonly logger = new Logger("registration");

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
    }>(
      `SELECT registration_status AS status, registration_webhook_id AS "webhookId",
              registration_expires_at AS "expiresAt", inbound_secrets AS "inboundSecrets"
       FROM connections WHERE id = $1::uuid AND tenant_id = $2::uuid`,
      [connectionId, tenantId],
    );
    const row = rows[0];
    if (!row) return undefined;
    let inbound: InboundCredentials = { type: "none" };
    try {
      if (row.inboundSecrets) {
        inbound = this.box.open<InboundCredentials>(
          row.inboundSecrets,
          secretPlace("inbound_secrets", connectionId),
        );
      }
    } catch {
      throw new PermanentError("secrets_unreadable"); // as in the job context: fix the key or data, then replay
    }
    return { status: row.status, known: { webhookId: row.webhookId, expiresAt: row.expiresAt }, inbound };
  }

  /**
   * THE place where a connection's registration status follows a provider call: `active` after a
   * registration (with the provider's webhook id and expiry, next re-sync scheduled), `error` with
   * the failure's code (the provider-sync job retries with backoff; nothing else changes), and
   * `manual` once a disconnect removed it (Leadgate no longer looks after it). The alerts issue
   * raises and resolves `registration.error` from here. Ingest never reads any of it.
   */
  async recordOutcome(
    tenantId: string,
    connectionId: string,
    outcome: RegistrationOutcome,
    resyncSeconds: number,
  ): Promise<void> {
    const log = { tenantId, connectionId };
    switch (outcome.kind) {
      case "registered": {
        const { webhookId, expiresAt } = outcome.registered;
        await this.prisma.pool.query(
          `UPDATE connections SET registration_status = 'active', registration_webhook_id = $3,
             registration_expires_at = $4, registration_synced_at = now(), registration_last_error = NULL,
             registration_due_at = now() + make_interval(secs => $5::double precision)
           WHERE id = $1::uuid AND tenant_id = $2::uuid AND registration_status <> 'manual'`,
          [connectionId, tenantId, webhookId, expiresAt, resyncSeconds],
        );
        this.logger.log({ msg: "provider webhook registered", ...log, providerWebhookId: webhookId });
        return;
      }
      case "removed":
        await this.prisma.pool.query(
          `UPDATE connections SET registration_status = 'manual', registration_webhook_id = NULL,
             registration_expires_at = NULL, registration_synced_at = now(), registration_last_error = NULL,
             registration_due_at = NULL
           WHERE id = $1::uuid AND tenant_id = $2::uuid`,
          [connectionId, tenantId],
        );
        this.logger.log({ msg: "provider webhook removed", ...log });
        return;
      case "failed":
        await this.prisma.pool.query(
          `UPDATE connections SET registration_status = 'error', registration_last_error = $3
           WHERE id = $1::uuid AND tenant_id = $2::uuid AND registration_status <> 'manual'`,
          [connectionId, tenantId, outcome.errorCode],
        );
        this.logger.warn({
          msg: "provider webhook registration failed",
          ...log,
          errorCode: outcome.errorCode,
        });
        return;
    }
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
