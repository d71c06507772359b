import { CONFIG, type HttpConfig } from "../config/sections.js";
import { Inject, Injectable } from "@nestjs/common";
import { ApiProperty } from "@nestjs/swagger";
import { AppError } from "../common/app-error.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Tx } from "../database/transactions.js";
import { PasswordSlots } from "./password-slots.js";
import { checkNewPassword, hashPassword } from "./passwords.js";
import { hashToken, newToken } from "./tokens.js";

export const INVITATION_HOURS = 72;
export const ACCEPT_PATH = "/console/accept-invitation";

/** An invitation shown to whoever invited: the URL carries the token, shown this once. */
export class Invitation {
  @ApiProperty({
    description: "`${PUBLIC_BASE_URL}/console/accept-invitation?token=…`: single use, shown this once",
  })
  url!: string;

  @ApiProperty({ description: `${INVITATION_HOURS} h after it was issued` })
  expiresAt!: Date;
}

const invalidInvitation = () =>
  new AppError(
    400,
    "invalid_invitation",
    `This invitation is unknown, already used, replaced by a newer one or expired (${INVITATION_HOURS} h): ask for a new one.`,
  );

export const alreadyAccepted = () =>
  new AppError(
    409,
    "already_accepted",
    "This user has accepted its invitation (or is disabled): a new invitation is only for a user who has not.",
  );

@Injectable()
export class InvitationsRepository {
  constructor(
    private readonly prisma: PrismaService,
    private readonly slots: PasswordSlots,
    @Inject(CONFIG.http) private readonly http: HttpConfig,
  ) {}

  /**
   * A new invitation of `userId`, in the caller's transaction; the user's older ones stop working.
   * The user's row is locked first, as an acceptance locks it, so a re-invitation and an acceptance
   * (or two re-invitations) run one after the other: `409 already_accepted` once a password is set
   * or the user is disabled, and never two live invitations.
   */
  async issue(tx: Tx, userId: string): Promise<Invitation> {
    const [user] = await tx.$queryRaw<{ open: boolean }[]>`
      SELECT password_hash IS NULL AND disabled_at IS NULL AS open FROM users
      WHERE id = ${userId}::uuid FOR UPDATE`;
    if (!user?.open) throw alreadyAccepted();
    const token = newToken();
    await tx.userInvitation.updateMany({
      where: { userId, usedAt: null, voidedAt: null },
      data: { voidedAt: new Date() },
    });
    const row = await tx.$queryRaw<{ expires_at: Date }[]>`
      INSERT INTO user_invitations (user_id, token_hash, expires_at)
      VALUES (${userId}::uuid, ${hashToken(token)}, now() + make_interval(hours => ${INVITATION_HOURS}))
      RETURNING expires_at`;
    return {
      url: `${this.http.publicBaseUrl}${ACCEPT_PATH}?token=${encodeURIComponent(token)}`,
      expiresAt: row[0]!.expires_at,
    };
  }

  /**
   * Sets the password of the user `token` invites and uses the invitation up: `400
   * invalid_invitation` for a used, voided, expired or unknown token (or a disabled user), `400
   * validation_failed` for a password that may not be chosen; nothing is written then.
   */
  async accept(token: unknown, password: unknown): Promise<void> {
    if (typeof token !== "string" || token.length === 0 || token.length > 200) throw invalidInvitation();
    const hash = hashToken(token);
    const [found] = await this.prisma.$queryRaw<{ email: string }[]>`
      SELECT u.email FROM user_invitations i JOIN users u ON u.id = i.user_id
      WHERE i.token_hash = ${hash} AND i.used_at IS NULL AND i.voided_at IS NULL
        AND i.expires_at > now() AND u.disabled_at IS NULL`;
    if (!found) throw invalidInvitation();
    const chosen = checkNewPassword(password, found.email);
    const passwordHash = await this.slots.run(() => hashPassword(chosen));
    const accepted = await this.prisma.$transaction(async (tx) => {
      // The user's row first, as issue() locks it: an acceptance and a re-invitation serialize.
      await tx.$queryRaw`
        SELECT u.id FROM users u JOIN user_invitations i ON i.user_id = u.id
        WHERE i.token_hash = ${hash} FOR UPDATE OF u`;
      const used = await tx.$queryRaw<{ user_id: string }[]>`
        UPDATE user_invitations SET used_at = now()
        WHERE token_hash = ${hash} AND used_at IS NULL AND voided_at IS NULL AND expires_at > now()
        RETURNING user_id`;
      if (used.length === 0) return false;
      const updated = await tx.user.updateMany({
        // A user with a password keeps it: an invitation never resets one.
        where: { id: used[0]!.user_id, disabledAt: null, passwordHash: null },
        data: { passwordHash },
      });
      if (updated.count === 0) throw invalidInvitation();
      return true;
    });
    if (!accepted) throw invalidInvitation();
  }
}
