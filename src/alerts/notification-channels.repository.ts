// Notification channels: where a tenant's alerts are sent (tenant_id null: a platform channel,
// which receives every tenant's alerts). A webhook channel's signing secret and a Slack channel's
// incoming-webhook URL are secrets: stored as envelopes bound to the channel's row (`secrets`).
import { randomBytes, randomUUID } from "node:crypto";
import { Injectable } from "@nestjs/common";
import { type TenantScope, tenantParam } from "../auth/principal.js";
import { PermanentError } from "../common/outbound/errors.js";
import { SecretBox } from "../crypto/secret-box.js";
import { notificationChannelPlace as channelPlace } from "../crypto/stored-secrets.js";
import { PrismaService } from "../database/prisma.service.js";
import type { AlertType, ChannelType } from "./alert-types.js";

/** A channel as the admin API shows it: no secret (a Slack URL is one). */
export interface ChannelView {
  id: string;
  tenantId: string | null;
  type: ChannelType;
  url: string | null;
  address: string | null;
  types: AlertType[] | null;
  createdAt: Date;
}

/** What a channel's sender needs, its secrets opened. */
export interface ChannelTarget extends ChannelView {
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
  type: ChannelType;
  url?: string;
  address?: string;
  types?: AlertType[];
}

const COLUMNS = `id, tenant_id AS "tenantId", type, url, address, types, created_at AS "createdAt"`;

@Injectable()
export class NotificationChannels {
  constructor(
    private readonly prisma: PrismaService,
    private readonly box: SecretBox,
  ) {}

  /**
   * Creates a channel of `tenantId` (null: a platform channel). A webhook channel gets its signing
   * secret, answered this once; a Slack URL is stored only as a secret.
   */
  async create(
    tenantId: string | null,
    channel: NewChannel,
  ): Promise<{ channel: ChannelView; secrets?: { signingSecret: string } }> {
    const id = randomUUID();
    const signingSecret =
      channel.type === "webhook" ? `whsec_${randomBytes(32).toString("base64")}` : undefined;
    const secrets: ChannelSecrets | undefined =
      channel.type === "webhook"
        ? { signingSecret }
        : channel.type === "slack"
          ? { url: channel.url }
          : undefined;
    const { rows } = await this.prisma.pool.query<ChannelView>(
      `INSERT INTO notification_channels (id, tenant_id, type, url, address, types, secrets)
       VALUES ($1::uuid, $2::uuid, $3, $4, $5, $6::text[], $7)
       RETURNING ${COLUMNS}`,
      [
        id,
        tenantId,
        channel.type,
        channel.type === "webhook" ? channel.url : null,
        channel.type === "email" ? channel.address : null,
        channel.types ?? null,
        secrets ? this.box.seal(secrets, channelPlace(id)) : null,
      ],
    );
    return { channel: rows[0]!, ...(signingSecret ? { secrets: { signingSecret } } : {}) };
  }

  /**
   * The scope's channels, newest first: a tenant sees its own; an operator sees all (a tenant's
   * and the platform's). Keyset pagination on (created_at, id).
   */
  async list(
    scope: TenantScope,
    page: { take: number; after?: { at: Date; id: string } },
  ): Promise<ChannelView[]> {
    const { rows } = await this.prisma.pool.query<ChannelView>(
      `SELECT ${COLUMNS} FROM notification_channels
       WHERE ($1::uuid IS NULL OR tenant_id = $1::uuid)
         AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::uuid))
       ORDER BY created_at DESC, id DESC LIMIT $4`,
      [tenantParam(scope), page.after?.at ?? null, page.after?.id ?? null, page.take],
    );
    return rows;
  }

  /** The channel, if the scope may see it (a tenant never sees a platform channel). */
  async find(scope: TenantScope, id: string): Promise<ChannelView | undefined> {
    const { rows } = await this.prisma.pool.query<ChannelView>(
      `SELECT ${COLUMNS} FROM notification_channels WHERE id = $1::uuid AND ($2::uuid IS NULL OR tenant_id = $2::uuid)`,
      [id, tenantParam(scope)],
    );
    return rows[0];
  }

  /** Deletes the channel if the scope may see it; answers whether it did. Its pending notifications send nothing. */
  async delete(scope: TenantScope, id: string): Promise<boolean> {
    const { rowCount } = await this.prisma.pool.query(
      "DELETE FROM notification_channels WHERE id = $1::uuid AND ($2::uuid IS NULL OR tenant_id = $2::uuid)",
      [id, tenantParam(scope)],
    );
    return (rowCount ?? 0) > 0;
  }

  /**
   * The channel a notification of `tenantId`'s alert goes to, secrets opened: the tenant's own or a
   * platform channel; undefined when it is gone (deleted) or belongs to another tenant.
   */
  async target(tenantId: string, id: string): Promise<ChannelTarget | undefined> {
    const { rows } = await this.prisma.pool.query<ChannelView & { secrets: string | null }>(
      `SELECT ${COLUMNS}, secrets FROM notification_channels
       WHERE id = $1::uuid AND (tenant_id = $2::uuid OR tenant_id IS NULL)`,
      [id, tenantId],
    );
    return rows[0] && this.opened(rows[0]);
  }

  /** A channel found by `find`, secrets opened (for its test notification). */
  async targetOf(scope: TenantScope, id: string): Promise<ChannelTarget | undefined> {
    const { rows } = await this.prisma.pool.query<ChannelView & { secrets: string | null }>(
      `SELECT ${COLUMNS}, secrets FROM notification_channels WHERE id = $1::uuid AND ($2::uuid IS NULL OR tenant_id = $2::uuid)`,
      [id, tenantParam(scope)],
    );
    return rows[0] && this.opened(rows[0]);
  }

  /** Its secrets opened; one that does not open (a key not configured, or moved here) is permanent. */
  private opened({ secrets, ...view }: ChannelView & { secrets: string | null }): ChannelTarget {
    let opened: ChannelSecrets = {};
    try {
      if (secrets) opened = this.box.open<ChannelSecrets>(secrets, channelPlace(view.id));
    } catch {
      throw new PermanentError("secrets_unreadable");
    }
    return {
      ...view,
      sendUrl: view.type === "webhook" ? (view.url ?? undefined) : opened.url,
      signingSecret: opened.signingSecret,
    };
  }
}
