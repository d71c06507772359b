import { Injectable, Logger } from "@nestjs/common";
import { AppError } from "../common/app-error.js";
import { PasswordSlots } from "./password-slots.js";
import { passwordMatches } from "./passwords.js";
import { SessionsRepository } from "./sessions.repository.js";
import { SignInThrottle } from "./sign-in-throttle.js";
import type { SessionUser, UserRole } from "./user.js";
import { UsersRepository } from "./users.repository.js";

export const invalidCredentials = () =>
  new AppError(401, "invalid_credentials", "The e-mail or the password is wrong.");

/**
 * Signing in with an e-mail and a password. A wrong e-mail and a wrong password get the same
 * answer after the same work (an unknown e-mail is verified against a dummy hash). Each attempt is
 * counted by the throttle (SignInThrottle: per e-mail and address pair, and per address) before
 * its password is checked, in one of the process's password slots.
 */
@Injectable()
export class SignIn {
  private readonly logger = new Logger("sign-in");

  constructor(
    private readonly users: UsersRepository,
    private readonly sessions: SessionsRepository,
    private readonly throttle: SignInThrottle,
    private readonly slots: PasswordSlots,
  ) {}

  async signIn(
    email: string,
    password: string,
    ip: string,
  ): Promise<{ user: SessionUser; token: string; csrfToken: string }> {
    const attempt = await this.throttle.attempt(email, ip);
    const row = await this.users.findForSignIn(email);
    const usable = row !== null && row.disabledAt === null ? row.passwordHash : null;
    if (!(await this.slots.run(() => passwordMatches(usable, password)))) {
      this.logger.warn({ msg: "sign-in failed", ip });
      throw invalidCredentials();
    }
    await attempt.succeeded();
    const session = await this.sessions.create(row!.id);
    this.logger.log({ msg: "signed in", userId: row!.id });
    const { id, email: stored, role, tenantId, createdAt } = row!;
    return { user: { id, email: stored, role: role as UserRole, tenantId, createdAt }, ...session };
  }
}
