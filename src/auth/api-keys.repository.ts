import { CONFIG, type AuthConfig } from "../config/sections.js";
import { Inject, Injectable } from "@nestjs/common";
import { AppError } from "../common/app-error.js";
import { KnownIds } from "../database/known-ids.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Tx } from "../database/transactions.js";
import type { Prisma } from "../generated/prisma/client.js";
import { ApiProperty } from "@nestjs/swagger";
import { NullableDate, NullableId } from "../common/api-properties.js";
import { ROLES, type Role, generateApiKey, hashApiKey, prefixOf } from "./api-key.js";
import type { Principal } from "./principal.js";
import { type TenantScope, tenantParam, tenantWhere } from "./principal.js";

const API_KEY_VIEW = {
  id: true,
  tenantId: true,
  name: true,
  role: true,
  prefix: true,
  createdAt: true,
  revokedAt: true,
  lastUsedAt: true,
  createdByUserId: true,
  createdByKeyId: true,
} satisfies Prisma.ApiKeySelect;

/** Who created a key: a console user or another API key. */
export class KeyCreator {
  @NullableId("the console user who created the key")
  userId!: string | null;

  @NullableId("the API key that created the key")
  apiKeyId!: string | null;
}

/** An API key as the admin API lists it: never its secret or hash. */
export class ApiKeyView {
  @ApiProperty({ format: "uuid" })
  id!: string;

  @NullableId("null for an operator key")
  tenantId!: string | null;

  @ApiProperty()
  name!: string;

  @ApiProperty({ enum: ROLES })
  role!: Role;

  @ApiProperty({ description: "the key's public prefix (`lg_<12 hex>`)" })
  prefix!: string;

  @ApiProperty()
  createdAt!: Date;

  @NullableDate()
  revokedAt!: Date | null;

  @NullableDate("recorded to the minute")
  lastUsedAt!: Date | null;

  @ApiProperty({
    type: () => KeyCreator,
    nullable: true,
    description:
      "who created the key; null for the bootstrap key and keys older than this record whose creation the audit log no longer held",
  })
  createdBy!: KeyCreator | null;
}

function toApiKeyView(row: Prisma.ApiKeyGetPayload<{ select: typeof API_KEY_VIEW }>): ApiKeyView {
  const { createdByUserId, createdByKeyId, role, ...rest } = row;
  const createdBy =
    createdByUserId === null && createdByKeyId === null
      ? null
      : { userId: createdByUserId, apiKeyId: createdByKeyId };
  return { ...rest, role: role as Role, createdBy };
}

/** A key shown to its creator, once: the only time `key` leaves the process. */
export interface CreatedApiKey {
  id: string;
  key: string;
}

/** `lastUsedAt` is recorded to this resolution. */
export const LAST_USED_RESOLUTION_MS = 60_000;

@Injectable()
export class ApiKeysRepository {
  /** Every key's prefix (revoked ones too), so a made-up key can be refused without a query. */
  private readonly prefixes: KnownIds;

  constructor(
    private readonly prisma: PrismaService,
    @Inject(CONFIG.auth) private readonly config: AuthConfig,
  ) {
    this.prefixes = new KnownIds(prisma.pool, "SELECT prefix AS id FROM api_keys WHERE created_at >= $1");
  }

  /** False when no key has this prefix (see KnownIds: no query per call). */
  mayExist(prefix: string): Promise<boolean> {
    return this.prefixes.mayExist(prefix);
  }

  /**
   * Creates a key inside the caller's transaction, recording who created it (`by`: the key or user
   * of the request). A tenant's key must fit under MAX_API_KEYS_PER_TENANT active keys (`422
   * limit_reached` otherwise); operator keys belong to no tenant and have no cap.
   */
  async create(
    tx: Tx,
    input: { tenantId: string | null; name: string; role: Role },
    by: Pick<Principal, "keyId" | "userId">,
  ): Promise<CreatedApiKey> {
    if (input.tenantId !== null) await this.makeRoom(tx, input.tenantId);
    const key = generateApiKey();
    const row = await tx.apiKey.create({
      data: {
        ...input,
        prefix: prefixOf(key),
        keyHash: hashApiKey(key),
        createdByUserId: by.userId,
        createdByKeyId: by.keyId,
      },
      select: { id: true },
    });
    this.prefixes.add(prefixOf(key));
    return { id: row.id, key };
  }

  /**
   * Refuses a tenant's key beyond its cap. The database decides under concurrent creations: the
   * tenant's row is locked first (FOR NO KEY UPDATE, which foreign-key checks of other writes do
   * not wait for), so creations of one tenant's keys run one after the other, and each counts the
   * keys the earlier ones committed.
   */
  private async makeRoom(tx: Tx, tenantId: string): Promise<void> {
    await tx.$queryRaw`SELECT id FROM tenants WHERE id = ${tenantId}::uuid FOR NO KEY UPDATE`;
    const active = await tx.apiKey.count({ where: { tenantId, revokedAt: null } });
    if (active >= this.config.maxApiKeysPerTenant) {
      throw new AppError(
        422,
        "limit_reached",
        `This tenant has ${active} active API keys, its limit (MAX_API_KEYS_PER_TENANT): revoke one before creating another.`,
      );
    }
  }

  /**
   * Makes sure the bootstrap operator key exists and revokes the bootstrap keys created before it
   * (the environment variable was changed to retire them). A revoked key stays revoked, and an
   * older key never revokes a newer one (a replica still configured with it restarting mid-deploy).
   * Answers whether the key can be used.
   */
  async ensureOperatorKey(key: string): Promise<{ usable: boolean; revokedOlder: number }> {
    const [row] = await this.prisma.$queryRaw<{ usable: boolean; revoked_older: number }[]>`
      WITH ensured AS (
        INSERT INTO api_keys (tenant_id, name, role, prefix, key_hash, bootstrap)
        VALUES (NULL, 'bootstrap', 'operator', ${prefixOf(key)}, ${hashApiKey(key)}, true)
        ON CONFLICT (prefix) DO UPDATE SET bootstrap = true
          WHERE api_keys.key_hash = EXCLUDED.key_hash AND api_keys.tenant_id IS NULL AND api_keys.role = 'operator'
        RETURNING created_at, revoked_at
      ), revoked AS (
        UPDATE api_keys SET revoked_at = now()
        WHERE bootstrap AND revoked_at IS NULL AND created_at < (SELECT created_at FROM ensured)
        RETURNING id
      )
      SELECT coalesce((SELECT revoked_at IS NULL FROM ensured), false) AS usable,
             (SELECT count(*) FROM revoked)::int AS revoked_older`;
    return { usable: row!.usable, revokedOlder: row!.revoked_older };
  }

  /** The key row a presented key names, if any; the caller compares the hash. */
  findByPrefix(prefix: string) {
    return this.prisma.apiKey.findUnique({
      where: { prefix },
      select: { id: true, tenantId: true, role: true, keyHash: true, revokedAt: true, lastUsedAt: true },
    });
  }

  /** Records use, at most once a minute per key (a write per request would cost more than the request). */
  async touch(id: string): Promise<void> {
    const stale = new Date(Date.now() - LAST_USED_RESOLUTION_MS);
    await this.prisma.apiKey.updateMany({
      where: { id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: stale } }] },
      data: { lastUsedAt: new Date() },
    });
  }

  async list(
    scope: TenantScope,
    page: { take: number; where?: Prisma.ApiKeyWhereInput },
  ): Promise<ApiKeyView[]> {
    const rows = await this.prisma.apiKey.findMany({
      where: { ...tenantWhere(scope), ...page.where },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: page.take,
      select: API_KEY_VIEW,
    });
    return rows.map(toApiKeyView);
  }

  /**
   * Revokes a key of the scope and, in the same transaction, ends the OAuth attempts it started
   * that are still pending: their callbacks answer `invalid_oauth_state`, as for an expired attempt
   * (an attempt is only ever as trusted as the key behind it). Answers the key (undefined: not in
   * the scope). Revoking twice is a no-op.
   */
  async revoke(tx: Tx, scope: TenantScope, id: string): Promise<{ tenantId: string | null } | undefined> {
    const found = await tx.apiKey.findFirst({
      where: { ...tenantWhere(scope), id },
      select: { tenantId: true },
    });
    if (!found) return undefined;
    await tx.apiKey.updateMany({
      where: { ...tenantWhere(scope), id, revokedAt: null },
      data: { revokedAt: new Date() },
    });
    // The database's clock, the one the callback compares expires_at with.
    const tenantId = tenantParam(scope);
    await tx.$executeRaw`
      UPDATE oauth_attempts SET expires_at = now()
      WHERE api_key_id = ${id}::uuid AND (${tenantId}::uuid IS NULL OR tenant_id = ${tenantId}::uuid)
        AND consumed_at IS NULL AND expires_at > now()`;
    return found;
  }

  /**
   * Revokes, in the caller's transaction, the unrevoked keys of the scope that the console user
   * `userId` created, and ends the OAuth attempts they started that are still pending, as `revoke`
   * does for one key. Answers the keys revoked (none: the user created none, or all are revoked).
   */
  async revokeCreatedBy(
    tx: Tx,
    scope: TenantScope,
    userId: string,
  ): Promise<{ id: string; tenantId: string | null }[]> {
    const tenantId = tenantParam(scope);
    const revoked = await tx.$queryRaw<{ id: string; tenant_id: string | null }[]>`
      UPDATE api_keys SET revoked_at = now()
      WHERE created_by_user_id = ${userId}::uuid AND revoked_at IS NULL
        AND (${tenantId}::uuid IS NULL OR tenant_id = ${tenantId}::uuid)
      RETURNING id, tenant_id`;
    if (revoked.length > 0) {
      const ids = revoked.map((key) => key.id);
      await tx.$executeRaw`
        UPDATE oauth_attempts SET expires_at = now()
        WHERE api_key_id = ANY(${ids}::uuid[]) AND consumed_at IS NULL AND expires_at > now()`;
    }
    return revoked.map((key) => ({ id: key.id, tenantId: key.tenant_id }));
  }

  /**
   * True while the key `id` is not revoked, and keeps it so until the caller's transaction ends: the
   * row is locked FOR SHARE, so a revocation waits for that transaction, or has committed before
   * and is seen. What a key started (an OAuth callback) writes under this check or not at all.
   */
  async lockUnrevoked(tx: Tx, id: string): Promise<boolean> {
    const rows = await tx.$queryRaw<unknown[]>`
      SELECT 1 FROM api_keys WHERE id = ${id}::uuid AND revoked_at IS NULL FOR SHARE`;
    return rows.length === 1;
  }
}
