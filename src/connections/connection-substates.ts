// The connection store's bookkeeping of sub-states (see connection-store.ts): the provider-side
// webhook registration, reconciliation runs and schedule, the refresh lease and refreshed tokens,
// and a disabled connection's clean-up (re-sealed secrets: connection-secrets.ts). None changes the status; each is one
// SQL statement that writes only when the connection's status allows the named transition
// (`status = ANY(from)`), and the ones that open or resolve an alert do so in the same transaction.
import { Injectable } from "@nestjs/common";
import { AlertBook } from "../alerts/alert-book.js";
import { SecretBox } from "../crypto/secret-box.js";
import { secretPlace } from "../crypto/stored-secrets.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Tx } from "../database/transactions.js";
import type { ConnectionRef } from "./connection-store.js";
import { allowedFrom, type OAuthStatus, type TransitionName } from "./lifecycle/connection-states.js";

/** How a provider-sync attempt ended, for the connection's registration. */
export type RegistrationOutcome =
  | { kind: "registered"; webhookId: string | null; expiresAt: Date | null; webhookUrl?: string | null }
  | { kind: "removed" }
  | { kind: "failed"; errorCode: string };

/** A connection's last reconciliation run, as its view shows it. */
export type RunOutcome =
  { status: "active"; leadsFound: number; missed: number } | { status: "manual" | "error"; error: string };

/** The token columns a refresh reads under its lease. */
export interface TokenRow {
  credentials: string;
  expiresAt: Date | null;
  issuedAt: Date | null;
  oauthStatus: OAuthStatus;
}

export interface DueCleanUp {
  id: string;
  tenantId: string;
  provider: string;
  credentials: string | null;
}

const TOKEN_COLUMNS = `credentials, token_expires_at AS "expiresAt", token_issued_at AS "issuedAt", oauth_status AS "oauthStatus"`;

/** `status = ANY($n)`: the statuses `transition` may start from. */
const from = (transition: TransitionName): string[] => [...allowedFrom(transition)];

@Injectable()
export class ConnectionSubstates {
  constructor(
    private readonly prisma: PrismaService,
    private readonly alerts: AlertBook,
    private readonly box: SecretBox,
  ) {}

  // --- registration (provider-sync) ---

  /**
   * Draws the connection's next registration sequence number for a provider-sync job of `action`,
   * in the caller's transaction (the row lock serializes starts of one connection until it
   * commits). A `sync` of a connection not registered yet makes its registration `pending`.
   */
  async requestSync(
    tx: Tx,
    ref: ConnectionRef,
    action: string,
    retrySeconds: number,
  ): Promise<number | undefined> {
    const [row] = await tx.$queryRawUnsafe<{ seq: number }[]>(
      `UPDATE connections SET registration_seq = registration_seq + 1,
         registration_status = CASE WHEN $3::text = 'sync' AND registration_status = 'manual' THEN 'pending'
                                    ELSE registration_status END,
         registration_due_at = CASE WHEN $3::text = 'remove' THEN NULL
                                    ELSE now() + make_interval(secs => $4::double precision) END
       WHERE id = $1::uuid AND tenant_id = $2::uuid AND status = ANY($5::text[])
       RETURNING registration_seq AS seq`,
      ref.id,
      ref.tenantId,
      action,
      retrySeconds,
      from("requestSync"),
    );
    return row?.seq;
  }

  /**
   * THE place where a connection's registration follows a provider call: `active` after a
   * registration (with the provider's webhook id and expiry, next re-sync scheduled), `error` with
   * the failure's code, `manual` once a disconnect removed it. The `registration.error` alert
   * (grouped by error code) is raised by a failure and resolved by a success, in the same transaction.
   */
  recordRegistration(ref: ConnectionRef, outcome: RegistrationOutcome, resyncSeconds: number): Promise<void> {
    const statuses = from("recordRegistration");
    return this.prisma.$transaction(async (tx) => {
      if (outcome.kind === "failed") {
        const [row] = await tx.$queryRawUnsafe<{ displayName: string; provider: string }[]>(
          `UPDATE connections SET registration_status = 'error', registration_last_error = $3
           WHERE id = $1::uuid AND tenant_id = $2::uuid AND registration_status <> 'manual' AND status = ANY($4::text[])
           RETURNING display_name AS "displayName", provider`,
          ref.id,
          ref.tenantId,
          outcome.errorCode,
          statuses,
        );
        if (!row) return;
        await this.alerts.raise(tx, {
          tenantId: ref.tenantId,
          type: "registration.error",
          connectionId: ref.id,
          operation: "provider-sync",
          errorCode: outcome.errorCode,
          summary: `${row.displayName}: registering the webhook with ${row.provider} failed (${outcome.errorCode}); retried with backoff.`,
        });
        return;
      }
      const updated =
        outcome.kind === "registered"
          ? await tx.$executeRawUnsafe(
              `UPDATE connections SET registration_status = 'active', registration_webhook_id = $3,
                 registration_expires_at = $4, registration_synced_at = now(), registration_last_error = NULL,
                 registration_due_at = now() + make_interval(secs => $5::double precision),
                 registration_webhook_url = $7
               WHERE id = $1::uuid AND tenant_id = $2::uuid AND registration_status <> 'manual' AND status = ANY($6::text[])`,
              ref.id,
              ref.tenantId,
              outcome.webhookId,
              outcome.expiresAt,
              resyncSeconds,
              statuses,
              outcome.webhookUrl
                ? this.box.seal(outcome.webhookUrl, secretPlace("registration_webhook_url", ref.id))
                : null,
            )
          : await tx.$executeRawUnsafe(
              `UPDATE connections SET registration_status = 'manual', registration_webhook_id = NULL,
                 registration_expires_at = NULL, registration_synced_at = now(), registration_last_error = NULL,
                 registration_due_at = NULL, registration_webhook_url = NULL
               WHERE id = $1::uuid AND tenant_id = $2::uuid AND status = ANY($3::text[])`,
              ref.id,
              ref.tenantId,
              statuses,
            );
      if (updated > 0) {
        await this.alerts.clear(tx, {
          tenantId: ref.tenantId,
          type: "registration.error",
          connectionId: ref.id,
        });
      }
    });
  }

  // --- reconciliation ---

  /**
   * Records a periodic run on the connection (its `reconciliation` view), and its `webhooks.missing`
   * alert: raised by a run that stored leads no webhook delivered, resolved by a run that found none missing.
   */
  recordReconciliation(ref: ConnectionRef, outcome: RunOutcome): Promise<void> {
    const active = outcome.status === "active";
    return this.prisma.$transaction(async (tx) => {
      const [row] = await tx.$queryRawUnsafe<{ displayName: string }[]>(
        `UPDATE connections SET reconcile_status = $3, reconcile_last_run_at = now(),
                reconcile_leads_found = CASE WHEN $3 = 'active' THEN $4::int ELSE reconcile_leads_found END,
                reconcile_missed = CASE WHEN $3 = 'active' THEN $5::int ELSE reconcile_missed END,
                reconcile_last_error = $6
         WHERE tenant_id = $2::uuid AND id = $1::uuid AND status = ANY($7::text[])
         RETURNING display_name AS "displayName"`,
        ref.id,
        ref.tenantId,
        outcome.status,
        active ? outcome.leadsFound : 0,
        active ? outcome.missed : 0,
        active ? null : outcome.error,
        from("recordReconciliation"),
      );
      if (!row || !active) return;
      const alert = { tenantId: ref.tenantId, type: "webhooks.missing" as const, connectionId: ref.id };
      if (outcome.missed > 0) {
        await this.alerts.raise(tx, {
          ...alert,
          operation: "reconciliation",
          summary: `${row.displayName}: reconciliation found ${outcome.missed} lead(s) that no webhook delivered.`,
        });
      } else {
        await this.alerts.clear(tx, alert);
      }
    });
  }

  /**
   * Moves each reconciled connection's tick forward to the one due at `now` (offset within the
   * interval: the first 32 bits of md5(id)), in the caller's transaction; answers the connections
   * whose tick moved and had one before (a connection seen for the first time only gets it noted).
   * Only active connections of `providers` with credentials are reconciled. Moving forward only, a
   * sweep that lost a race with another replica makes nothing twice.
   */
  scheduleReconciliations(
    tx: Tx,
    now: Date,
    intervalSeconds: number,
    providers: readonly string[],
  ): Promise<{ id: string; tenant_id: string; tick: string }[]> {
    return tx.$queryRawUnsafe(
      `WITH due AS (
         SELECT c.id, c.tenant_id, c.reconcile_tick AS previous,
                floor((extract(epoch FROM $1::timestamptz)
                       - (('x' || substr(md5(c.id::text), 1, 8))::bit(32)::bigint % $2::int)) / $2::int)::bigint AS tick
         FROM connections c
         WHERE c.status = ANY($4::text[]) AND c.provider = ANY($3::text[]) AND c.credentials IS NOT NULL
       ), moved AS (
         UPDATE connections c SET reconcile_tick = due.tick
         FROM due
         WHERE c.id = due.id AND (c.reconcile_tick IS NULL OR c.reconcile_tick < due.tick)
         RETURNING c.id, c.tenant_id, due.tick, due.previous
       )
       SELECT id, tenant_id, tick::text FROM moved WHERE previous IS NOT NULL`,
      now.toISOString(),
      intervalSeconds,
      [...providers],
      from("scheduleReconciliation"),
    );
  }

  // --- the refresh lease and refreshed tokens (ProviderTokens) ---

  /** Takes the refresh lease when it is free or expired: the token columns as they are now, or undefined. */
  async takeRefreshLease(ref: ConnectionRef, me: string, leaseMs: number): Promise<TokenRow | undefined> {
    const { rows } = await this.prisma.pool.query<TokenRow>(
      `UPDATE connections SET refresh_lease_owner = $3::uuid,
         refresh_lease_until = now() + make_interval(secs => $4::double precision / 1000)
       WHERE id = $1::uuid AND tenant_id = $2::uuid AND credentials IS NOT NULL
         AND (refresh_lease_until IS NULL OR refresh_lease_until < now()) AND status = ANY($5::text[])
       RETURNING ${TOKEN_COLUMNS}`,
      [ref.id, ref.tenantId, me, leaseMs, from("leaseRefresh")],
    );
    return rows[0];
  }

  async releaseRefreshLease(ref: ConnectionRef, me: string): Promise<void> {
    await this.prisma.pool.query(
      `UPDATE connections SET refresh_lease_owner = NULL, refresh_lease_until = NULL
       WHERE id = $1::uuid AND tenant_id = $2::uuid AND refresh_lease_owner = $3::uuid`,
      [ref.id, ref.tenantId, me],
    );
  }

  /** The connection's stored token columns (undefined: no credentials). */
  async readTokens(ref: ConnectionRef): Promise<TokenRow | undefined> {
    const { rows } = await this.prisma.pool.query<TokenRow>(
      `SELECT ${TOKEN_COLUMNS} FROM connections WHERE id = $1::uuid AND tenant_id = $2::uuid AND credentials IS NOT NULL`,
      [ref.id, ref.tenantId],
    );
    return rows[0];
  }

  /** Stores a refreshed pair, by the lease's holder only (and releases the lease); false if it lost the lease. */
  async storeRefreshedToken(
    ref: ConnectionRef,
    me: string,
    token: { sealed: string; expiresAt: string | null; scopes: string[] },
  ): Promise<boolean> {
    const stored = await this.prisma.pool.query(
      `UPDATE connections SET credentials = $4, token_expires_at = $5, token_issued_at = now(),
         last_refreshed_at = now(), oauth_scopes = $6, oauth_status = 'connected', oauth_last_error = NULL,
         refresh_lease_owner = NULL, refresh_lease_until = NULL, updated_at = now()
       WHERE id = $1::uuid AND tenant_id = $2::uuid AND refresh_lease_owner = $3::uuid AND status = ANY($7::text[])`,
      [ref.id, ref.tenantId, me, token.sealed, token.expiresAt, token.scopes, from("storeRefreshedToken")],
    );
    return (stored.rowCount ?? 0) > 0;
  }

  /** A refresh that failed for another reason than invalid_grant: noted, lease released, retried later. */
  async recordRefreshFailure(ref: ConnectionRef, me: string): Promise<void> {
    await this.prisma.pool.query(
      `UPDATE connections SET oauth_last_error = 'refresh_failed', refresh_lease_owner = NULL, refresh_lease_until = NULL
       WHERE id = $1::uuid AND tenant_id = $2::uuid AND refresh_lease_owner = $3::uuid AND status = ANY($4::text[])`,
      [ref.id, ref.tenantId, me, from("recordRefreshFailure")],
    );
  }

  // --- a disabled connection's clean-up (ConnectionCleanup) ---

  /**
   * Takes up to `batch` due clean-ups: each taken one's due time moves forward (one autocommit
   * UPDATE), so another worker skips it and one that dies mid-way leaves it for a retry. A
   * connection with a provider-sync job on its way waits: the provider-side removal needs the tokens.
   */
  async takeCleanUps(retryAfterSeconds: number, batch: number): Promise<DueCleanUp[]> {
    const { rows } = await this.prisma.pool.query<DueCleanUp>(
      `UPDATE connections SET cleanup_due_at = now() + make_interval(secs => $1)
       WHERE id IN (SELECT c.id FROM connections c WHERE c.status = ANY($3::text[]) AND c.cleanup_due_at <= now()
                      AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.tenant_id = c.tenant_id
                                        AND j.connection_id = c.id AND j.operation = 'provider-sync'
                                        AND j.status IN ('queued', 'running', 'retrying', 'waiting'))
                    ORDER BY c.cleanup_due_at LIMIT $2 FOR UPDATE OF c SKIP LOCKED)
       RETURNING id, tenant_id AS "tenantId", provider, credentials`,
      [retryAfterSeconds, batch, from("takeCleanUp")],
    );
    return rows;
  }

  async recordCleanUpFailure(ref: ConnectionRef): Promise<void> {
    await this.prisma.pool.query(
      `UPDATE connections SET oauth_last_error = 'revoke_failed'
       WHERE id = $1::uuid AND tenant_id = $2::uuid AND status = ANY($3::text[])`,
      [ref.id, ref.tenantId, from("recordCleanUpFailure")],
    );
  }

  /** The tokens deleted: the grant is `not_connected` and the clean-up done. */
  async finishCleanUp(ref: ConnectionRef): Promise<void> {
    await this.prisma.pool.query(
      `UPDATE connections SET credentials = NULL, oauth_status = 'not_connected', oauth_scopes = '{}',
         token_expires_at = NULL, token_issued_at = NULL, oauth_last_error = NULL, cleanup_due_at = NULL,
         updated_at = now()
       WHERE id = $1::uuid AND tenant_id = $2::uuid AND status = ANY($3::text[])`,
      [ref.id, ref.tenantId, from("finishCleanUp")],
    );
  }
}
