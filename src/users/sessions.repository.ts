import { Injectable } from "@nestjs/common";
import { PrismaService } from "../database/prisma.service.js";
import { hashToken, newToken } from "./tokens.js";
import type { SessionUser, UserRole } from "./user.js";

/** A session ends after this long without a request… */
export const SESSION_IDLE_HOURS = 12;
/** …and this long after sign-in, whatever its use. */
export const SESSION_MAX_DAYS = 7;
/** last_seen_at is recorded to this resolution (a write per request would cost more than the request). */
const LAST_SEEN_RESOLUTION_SECONDS = 60;

/** A live session and its user. */
export interface OpenSession {
  id: string;
  csrfToken: string;
  user: SessionUser;
}

@Injectable()
export class SessionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Starts a session of `userId`: the token goes in the cookie, only its hash in the row. */
  async create(userId: string): Promise<{ token: string; csrfToken: string }> {
    const token = newToken();
    const csrfToken = newToken();
    await this.prisma.session.create({ data: { userId, tokenHash: hashToken(token), csrfToken } });
    return { token, csrfToken };
  }

  /** The live session `token` opens (not revoked, idle or too old; its user not disabled), if any. */
  async open(token: string): Promise<OpenSession | undefined> {
    const [row] = await this.prisma.$queryRaw<
      {
        id: string;
        csrf_token: string;
        stale: boolean;
        user_id: string;
        email: string;
        role: UserRole;
        tenant_id: string | null;
        created_at: Date;
      }[]
    >`
      SELECT s.id, s.csrf_token, s.last_seen_at < now() - make_interval(secs => ${LAST_SEEN_RESOLUTION_SECONDS}) AS stale,
             u.id AS user_id, u.email, u.role, u.tenant_id, u.created_at
      FROM sessions s JOIN users u ON u.id = s.user_id
      WHERE s.token_hash = ${hashToken(token)} AND s.revoked_at IS NULL AND u.disabled_at IS NULL
        AND s.last_seen_at > now() - make_interval(hours => ${SESSION_IDLE_HOURS})
        AND s.created_at > now() - make_interval(days => ${SESSION_MAX_DAYS})`;
    if (!row) return undefined;
    if (row.stale)
      await this.prisma.session.update({ where: { id: row.id }, data: { lastSeenAt: new Date() } });
    return {
      id: row.id,
      csrfToken: row.csrf_token,
      user: {
        id: row.user_id,
        email: row.email,
        role: row.role,
        tenantId: row.tenant_id,
        createdAt: row.created_at,
      },
    };
  }

  async revoke(id: string): Promise<void> {
    await this.prisma.session.updateMany({ where: { id, revokedAt: null }, data: { revokedAt: new Date() } });
  }
}
