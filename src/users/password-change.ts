import { Injectable, Logger } from "@nestjs/common";
import { PasswordSlots } from "./password-slots.js";
import { checkNewPassword, hashPassword, passwordMatches } from "./passwords.js";
import type { OpenSession } from "./sessions.repository.js";
import { invalidCredentials } from "./sign-in.js";
import { SignInThrottle } from "./sign-in-throttle.js";
import { UsersRepository } from "./users.repository.js";

/**
 * A signed-in user changing its password (POST /console/api/password). The new password is checked
 * first, as an invitation's is (`400 validation_failed`, nothing counted or written). The current
 * password is checked as a sign-in's is: counted by the sign-in throttle for the user's e-mail and
 * the client's address before the check (`429 rate_limited` when locked), a wrong one is `401
 * invalid_credentials` and stays counted, so a stolen session cannot guess faster than a sign-in.
 * Then the password is replaced and every other session of the user ends, in one transaction.
 */
@Injectable()
export class PasswordChange {
  private readonly logger = new Logger("users");

  constructor(
    private readonly users: UsersRepository,
    private readonly throttle: SignInThrottle,
    private readonly slots: PasswordSlots,
  ) {}

  async change(
    session: OpenSession,
    currentPassword: string,
    newPassword: unknown,
    ip: string,
  ): Promise<void> {
    const { id, email } = session.user;
    const chosen = checkNewPassword(newPassword, email, "newPassword");
    const attempt = await this.throttle.attempt(email, ip);
    const row = await this.users.findForSignIn(email);
    const stored = row !== null && row.id === id && row.disabledAt === null ? row.passwordHash : null;
    if (!(await this.slots.run(() => passwordMatches(stored, currentPassword)))) {
      this.logger.warn({ msg: "password change refused: wrong current password", userId: id, ip });
      throw invalidCredentials();
    }
    await attempt.succeeded();
    const passwordHash = await this.slots.run(() => hashPassword(chosen));
    const changed = await this.users.changePassword(id, {
      expectedHash: stored!,
      passwordHash,
      keepSessionId: session.id,
    });
    // Another change (or a disabling) committed since the check: this one is not made.
    if (!changed) throw invalidCredentials();
    this.logger.log({ msg: "password changed; the user's other sessions ended", userId: id });
  }
}
