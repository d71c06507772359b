// Notification channels: where a tenant's alerts are sent (tenant_id null: a platform channel,
// which receives every tenant's alerts). A webhook channel's signing secret and a Slack channel's
// incoming-webhook URL are secrets: stored as envelopes bound to the channel's row (`secrets`).
// A new email channel is `pending_confirmation` (with the sha256 of its confirmation token) until
// its address confirms; only `active` channels are sent alerts.
import { randomBytes, randomUUID } from "node:crypto";
import { CONFIG, type AlertsConfig } from "../config/sections.js";
import { Inject, Injectable } from "@nestjs/common";
import { type TenantScope, tenantParam } from "../auth/principal.js";
import { AppError } from "../common/app-error.js";
import { PermanentError } from "../common/outbound/errors.js";
import { SecretBox } from "../crypto/secret-box.js";
import { notificationChannelPlace as channelPlace } from "../crypto/stored-secrets.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Tx } from "../database/transactions.js";
import type { AlertType, ChannelType } from "./alert-types.js";
import { CONFIRMATION_DAYS } from "./channel-confirmation-token.js";

export type ChannelStatus = "active" | "pending_confirmation";

/** A channel as stored, without its secrets (a Slack URL is one); `url` in full (views mask it). */
export interface ChannelRow {
  id: string;
  tenantId: string | null;
  type: ChannelType;
  status: ChannelStatus;
  url: string | null;
  address: string | null;
  types: AlertType[] | null;
  createdAt: Date;
}

/** What a channel's sender needs, its secrets opened. */
export interface ChannelTarget extends ChannelRow {
  /** webhook: the URL. slack: the incoming-webhook URL (a secret). email: undefined. */
  sendUrl?: string;
  /** webhook: its `whsec_` signing secret. */
  signingSecret?: string;
}

interface ChannelSecrets {
  signingSecret?: string;
  url?: string;
}

export interface NewChannel {
  /** The id the channel gets (its confirmation token names it); default a new one. */
  id?: string;
  type: ChannelType;
  url?: string;
  address?: string;
  types?: AlertType[];
  /** email: the sha256 of its confirmation token; the channel is pending until it is confirmed. */
  confirmationHash?: string;
}

const COLUMNS = `id, tenant_id AS "tenantId", type, status, url, address, types, created_at AS "createdAt"`;
const EXPIRY = `now() + interval '${CONFIRMATION_DAYS} days'`;

@Injectable()
export class NotificationChannels {
  constructor(
    private readonly prisma: PrismaService,
    private readonly box: SecretBox,
    @Inject(CONFIG.alerts) private readonly config: AlertsConfig,
  ) {}

  /**
   * Creates a channel of `tenantId` (null: a platform channel) in `tx`. A tenant's channel must fit
   * under MAX_CHANNELS_PER_TENANT (`422 limit_reached` otherwise; platform channels have no cap).
   * A webhook channel gets its signing secret, answered this once; a Slack URL is stored only as a
   * secret; an email channel is pending until its confirmation.
   */
  async create(
    tx: Tx,
    tenantId: string | null,
    channel: NewChannel,
  ): Promise<{ channel: ChannelRow; secrets?: { signingSecret: string } }> {
    if (tenantId !== null) await this.makeRoom(tx, tenantId);
    const id = channel.id ?? randomUUID();
    const signingSecret =
      channel.type === "webhook" ? `whsec_${randomBytes(32).toString("base64")}` : undefined;
    const secrets: ChannelSecrets | undefined =
      channel.type === "webhook"
        ? { signingSecret }
        : channel.type === "slack"
          ? { url: channel.url }
          : undefined;
    const pending = channel.type === "email";
    const rows = await tx.$queryRawUnsafe<ChannelRow[]>(
      `INSERT INTO notification_channels
         (id, tenant_id, type, url, address, types, secrets, status, confirmation_hash, confirmation_expires_at)
       VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6::text[], $7, $8, $9, CASE WHEN $9::text IS NULL THEN NULL ELSE ${EXPIRY} END)
       RETURNING ${COLUMNS}`,
      id,
      tenantId,
      channel.type,
      channel.type === "webhook" ? channel.url : null,
      channel.type === "email" ? channel.address : null,
      channel.types ?? null,
      secrets ? this.box.seal(secrets, channelPlace(id)) : null,
      pending ? "pending_confirmation" : "active",
      pending ? (channel.confirmationHash ?? null) : null,
    );
    return { channel: rows[0]!, ...(signingSecret ? { secrets: { signingSecret } } : {}) };
  }

  /**
   * Refuses a tenant's channel beyond its cap. The database decides under concurrent creations:
   * the tenant's row is locked first (FOR NO KEY UPDATE, which foreign-key checks of other writes
   * do not wait for), so one tenant's creations run one after the other, each counting the
   * channels the earlier ones committed.
   */
  private async makeRoom(tx: Tx, tenantId: string): Promise<void> {
    await tx.$queryRaw`SELECT id FROM tenants WHERE id = ${tenantId}::uuid FOR NO KEY UPDATE`;
    const [{ n }] = await tx.$queryRaw<[{ n: number }]>`
      SELECT count(*)::int AS n FROM notification_channels WHERE tenant_id = ${tenantId}::uuid`;
    if (n >= this.config.maxChannelsPerTenant) {
      throw new AppError(
        422,
        "limit_reached",
        `This tenant has ${n} notification channels, its limit (MAX_CHANNELS_PER_TENANT): delete one before creating another.`,
      );
    }
  }

  /**
   * The scope's channels, newest first: a tenant sees its own; an operator sees all (a tenant's
   * and the platform's). Keyset pagination on (created_at, id).
   */
  async list(
    scope: TenantScope,
    page: { take: number; after?: { at: Date; id: string } },
  ): Promise<ChannelRow[]> {
    const { rows } = await this.prisma.pool.query<ChannelRow>(
      `SELECT ${COLUMNS} FROM notification_channels
       WHERE ($1::uuid IS NULL OR tenant_id = $1::uuid)
         AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::uuid))
       ORDER BY created_at DESC, id DESC LIMIT $4`,
      [tenantParam(scope), page.after?.at ?? null, page.after?.id ?? null, page.take],
    );
    return rows;
  }

  /** The channel, if the scope may see it (a tenant never sees a platform channel). */
  async find(scope: TenantScope, id: string): Promise<ChannelRow | undefined> {
    const { rows } = await this.prisma.pool.query<ChannelRow>(
      `SELECT ${COLUMNS} FROM notification_channels WHERE id = $1::uuid AND ($2::uuid IS NULL OR tenant_id = $2::uuid)`,
      [id, tenantParam(scope)],
    );
    return rows[0];
  }

  /** Deletes the channel in `tx` if the scope may see it; answers it (undefined: none). Its pending notifications send nothing. */
  async delete(tx: Tx, scope: TenantScope, id: string): Promise<ChannelRow | undefined> {
    const rows = await tx.$queryRawUnsafe<ChannelRow[]>(
      `DELETE FROM notification_channels WHERE id = $1::uuid AND ($2::uuid IS NULL OR tenant_id = $2::uuid)
       RETURNING ${COLUMNS}`,
      id,
      tenantParam(scope),
    );
    return rows[0];
  }

  /**
   * The active channel a notification of `tenantId`'s alert goes to, secrets opened: the tenant's
   * own or a platform channel; undefined when it is gone (deleted), not confirmed yet, or belongs
   * to another tenant.
   */
  async target(tenantId: string, id: string): Promise<ChannelTarget | undefined> {
    const { rows } = await this.prisma.pool.query<ChannelRow & { secrets: string | null }>(
      `SELECT ${COLUMNS}, secrets FROM notification_channels
       WHERE id = $1::uuid AND (tenant_id = $2::uuid OR tenant_id IS NULL) AND status = 'active'`,
      [id, tenantId],
    );
    return rows[0] && this.opened(rows[0]);
  }

  /** A channel found by `find`, secrets opened (for its test notification). */
  async targetOf(scope: TenantScope, id: string): Promise<ChannelTarget | undefined> {
    const { rows } = await this.prisma.pool.query<ChannelRow & { secrets: string | null }>(
      `SELECT ${COLUMNS}, secrets FROM notification_channels WHERE id = $1::uuid AND ($2::uuid IS NULL OR tenant_id = $2::uuid)`,
      [id, tenantParam(scope)],
    );
    return rows[0] && this.opened(rows[0]);
  }

  /**
   * Replaces a pending channel's confirmation token (the old one stops working) and restarts its
   * 7 days; answers the channel, or undefined when it is not pending (or not the scope's).
   */
  async renewConfirmation(scope: TenantScope, id: string, hash: string): Promise<ChannelRow | undefined> {
    const { rows } = await this.prisma.pool.query<ChannelRow>(
      `UPDATE notification_channels SET confirmation_hash = $3, confirmation_expires_at = ${EXPIRY}
       WHERE id = $1::uuid AND ($2::uuid IS NULL OR tenant_id = $2::uuid) AND status = 'pending_confirmation'
       RETURNING ${COLUMNS}`,
      [id, tenantParam(scope), hash],
    );
    return rows[0];
  }

  /**
   * The stored hash of a pending channel's token while it is valid (not expired), for the caller
   * to compare in constant time. Looked up by the id the token names: the token authenticates, so
   * no tenant is known yet.
   */
  async pendingConfirmation(id: string): Promise<string | undefined> {
    const { rows } = await this.prisma.pool.query<{ hash: string }>(
      `SELECT confirmation_hash AS hash FROM notification_channels
       WHERE id = $1::uuid AND status = 'pending_confirmation' AND confirmation_hash IS NOT NULL
         AND confirmation_expires_at > now()`,
      [id],
    );
    return rows[0]?.hash;
  }

  /**
   * Confirms the channel whose pending token has `hash` (compared already): it becomes active and
   * the token is used up. Answers the channel, or undefined when the token was used meanwhile,
   * replaced or expired (the statement decides: a token confirms once).
   */
  async confirm(id: string, hash: string): Promise<ChannelRow | undefined> {
    const { rows } = await this.prisma.pool.query<ChannelRow>(
      `UPDATE notification_channels
       SET status = 'active', confirmation_hash = NULL, confirmation_expires_at = NULL, confirmed_at = now()
       WHERE id = $1::uuid AND status = 'pending_confirmation' AND confirmation_hash = $2
         AND confirmation_expires_at > now()
       RETURNING ${COLUMNS}`,
      [id, hash],
    );
    return rows[0];
  }

  /** Its secrets opened; one that does not open (a key not configured, or moved here) is permanent. */
  private opened({ secrets, ...row }: ChannelRow & { secrets: string | null }): ChannelTarget {
    let opened: ChannelSecrets = {};
    try {
      if (secrets) opened = this.box.open<ChannelSecrets>(secrets, channelPlace(row.id));
    } catch {
      throw new PermanentError("secrets_unreadable");
    }
    return {
      ...row,
      sendUrl: row.type === "webhook" ? (row.url ?? undefined) : opened.url,
      signingSecret: opened.signingSecret,
    };
  }
}
