import { CONFIG, type UsersConfig } from "../config/sections.js";
import { Inject, Injectable } from "@nestjs/common";
import { AppError } from "../common/app-error.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Tx } from "../database/transactions.js";
import { Prisma } from "../generated/prisma/client.js";
import { USER_VIEW, type UserRole, type UserView, normalizeEmail, toUserView } from "./user.js";

const SELECT = { ...USER_VIEW, passwordHash: true } satisfies Prisma.UserSelect;

/**
 * Console users. `tenant` is the caller's scope: a tenant id, or null for every tenant (operators
 * only, as `tenantParam` of src/auth/principal.ts gives it); it is in every query.
 */
@Injectable()
export class UsersRepository {
  constructor(
    private readonly prisma: PrismaService,
    @Inject(CONFIG.users) private readonly config: UsersConfig,
  ) {}

  /**
   * Creates a user (no password yet) in the caller's transaction; `409 user_exists` when the e-mail
   * is taken, in any case. A tenant's user must fit under MAX_USERS_PER_TENANT (`422
   * limit_reached` otherwise); operators belong to no tenant and have no cap.
   */
  async create(tx: Tx, input: { email: string; role: UserRole; tenantId: string | null }): Promise<UserView> {
    if (input.tenantId !== null) await this.makeRoom(tx, input.tenantId);
    try {
      const row = await tx.user.create({
        data: { ...input, email: normalizeEmail(input.email) },
        select: SELECT,
      });
      return toUserView(row);
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002") {
        throw new AppError(409, "user_exists", "A user with this e-mail already exists.");
      }
      throw error;
    }
  }

  /**
   * Refuses a tenant's user beyond its cap: pending users count (each was sent an invitation),
   * disabled ones do not. The database decides under concurrent creations: the tenant's row is
   * locked first (FOR NO KEY UPDATE, which foreign-key checks of other writes do not wait for), so
   * one tenant's creations run one after the other, each counting the users the earlier ones
   * committed.
   */
  private async makeRoom(tx: Tx, tenantId: string): Promise<void> {
    await tx.$queryRaw`SELECT id FROM tenants WHERE id = ${tenantId}::uuid FOR NO KEY UPDATE`;
    const users = await tx.user.count({ where: { tenantId, disabledAt: null } });
    if (users >= this.config.maxUsersPerTenant) {
      throw new AppError(
        422,
        "limit_reached",
        `This tenant has ${users} users, its limit (MAX_USERS_PER_TENANT): disable one before inviting another.`,
      );
    }
  }

  async find(tenant: string | null, id: string): Promise<UserView | undefined> {
    const row = await this.prisma.user.findFirst({ where: { ...scoped(tenant), id }, select: SELECT });
    return row ? toUserView(row) : undefined;
  }

  async list(
    tenant: string | null,
    page: { take: number; where?: Prisma.UserWhereInput },
  ): Promise<UserView[]> {
    const rows = await this.prisma.user.findMany({
      where: { ...scoped(tenant), ...page.where },
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      take: page.take,
      select: SELECT,
    });
    return rows.map(toUserView);
  }

  /** The user an e-mail names, with its password hash, for signing in. */
  findForSignIn(email: string) {
    return this.prisma.user.findUnique({
      where: { email: normalizeEmail(email) },
      select: { ...SELECT },
    });
  }

  /**
   * Disables a user of the scope and, in the caller's transaction, ends its sessions and the OAuth
   * attempts it started that are still pending (their callbacks answer `invalid_oauth_state`).
   * Answers the user (undefined: not in the scope). Disabling twice is a no-op.
   */
  async disable(tx: Tx, tenant: string | null, id: string): Promise<UserView | undefined> {
    const found = await tx.user.findFirst({ where: { ...scoped(tenant), id }, select: SELECT });
    if (!found) return undefined;
    await tx.user.updateMany({
      where: { ...scoped(tenant), id, disabledAt: null },
      data: { disabledAt: new Date() },
    });
    await tx.session.updateMany({ where: { userId: id, revokedAt: null }, data: { revokedAt: new Date() } });
    await tx.$executeRaw`
      UPDATE oauth_attempts SET expires_at = now()
      WHERE user_id = ${id}::uuid AND (${tenant}::uuid IS NULL OR tenant_id = ${tenant}::uuid)
        AND consumed_at IS NULL AND expires_at > now()`;
    return toUserView({ ...found, disabledAt: found.disabledAt ?? new Date() });
  }

  /**
   * Replaces the password of the user `id` and ends its sessions but `keepSessionId`, in one
   * transaction; only while its hash is still `expectedHash` (the one the current password was
   * checked against) and it is not disabled. Answers false otherwise: a concurrent change or a
   * disabling won, nothing written.
   */
  async changePassword(
    id: string,
    change: { expectedHash: string; passwordHash: string; keepSessionId: string },
  ): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const updated = await tx.user.updateMany({
        where: { id, passwordHash: change.expectedHash, disabledAt: null },
        data: { passwordHash: change.passwordHash },
      });
      if (updated.count === 0) return false;
      await tx.session.updateMany({
        where: { userId: id, revokedAt: null, id: { not: change.keepSessionId } },
        data: { revokedAt: new Date() },
      });
      return true;
    });
  }

  /**
   * True while the user `id` is not disabled, and keeps it so until the caller's transaction ends
   * (FOR SHARE: a disabling waits for it), as ApiKeysRepository.lockUnrevoked does for a key.
   */
  async lockEnabled(tx: Tx, id: string): Promise<boolean> {
    const rows = await tx.$queryRaw<unknown[]>`
      SELECT 1 FROM users WHERE id = ${id}::uuid AND disabled_at IS NULL FOR SHARE`;
    return rows.length === 1;
  }
}

function scoped(tenant: string | null): { tenantId?: string } {
  return tenant === null ? {} : { tenantId: tenant };
}
