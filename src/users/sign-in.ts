import { CONFIG, type RedisConfig } from "../config/sections.js";
import { Inject, Injectable, Logger } from "@nestjs/common";
import type { RedisClient } from "../redis/redis.js";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { AppError } from "../common/app-error.js";
import { REDIS } from "../redis/redis.module.js";
import { passwordMatches } from "./passwords.js";
import { SessionsRepository } from "./sessions.repository.js";
import { hashToken } from "./tokens.js";
import { normalizeEmail, type SessionUser, type UserRole } from "./user.js";
import { UsersRepository } from "./users.repository.js";

const WINDOW_SECONDS = 15 * 60;
export const FAILURES_PER_EMAIL = 10;
export const FAILURES_PER_ADDRESS = 50;

const invalidCredentials = () =>
  new AppError(401, "invalid_credentials", "The e-mail or the password is wrong.");

/**
 * Signing in with an e-mail and a password. A wrong e-mail and a wrong password get the same
 * answer after the same work (an unknown e-mail is verified against a dummy hash). Attempts are
 * counted in Redis per e-mail (its hash) and per client address over 15 minutes, each taken (an
 * atomic increment) before its password is checked, so a burst of parallel guesses cannot pass
 * the check together; a success gives its points back. Past 10 per e-mail or 50 per address,
 * attempts get `429 rate_limited` without a password check.
 */
@Injectable()
export class SignIn {
  private readonly logger = new Logger("sign-in");
  private readonly perEmail: RateLimiterRedis;
  private readonly perAddress: RateLimiterRedis;

  constructor(
    private readonly users: UsersRepository,
    private readonly sessions: SessionsRepository,
    @Inject(REDIS) redis: RedisClient,
    @Inject(CONFIG.redis) redisConfig: RedisConfig,
  ) {
    const limiter = (name: string, points: number) =>
      new RateLimiterRedis({
        points,
        duration: WINDOW_SECONDS,
        storeClient: redis,
        keyPrefix: `${redisConfig.redisPrefix}:${name}`,
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory({ points, duration: WINDOW_SECONDS }),
      });
    this.perEmail = limiter("login-email", FAILURES_PER_EMAIL);
    this.perAddress = limiter("login-address", FAILURES_PER_ADDRESS);
  }

  async signIn(
    email: string,
    password: string,
    ip: string,
  ): Promise<{ user: SessionUser; token: string; csrfToken: string }> {
    const emailKey = hashToken(normalizeEmail(email));
    await this.take([
      [this.perEmail, emailKey],
      [this.perAddress, ip],
    ]);
    const row = await this.users.findForSignIn(email);
    const usable = row !== null && row.disabledAt === null ? row.passwordHash : null;
    if (!(await passwordMatches(usable, password))) {
      this.logger.warn({ msg: "sign-in failed", ip });
      throw invalidCredentials();
    }
    // Not a failure: the e-mail's count starts again, the address gets its point back.
    await Promise.all([
      this.perEmail.delete(emailKey).catch(() => undefined),
      this.perAddress.reward(ip, 1).catch(() => undefined),
    ]);
    const session = await this.sessions.create(row!.id);
    this.logger.log({ msg: "signed in", userId: row!.id });
    const { id, email: stored, role, tenantId, createdAt } = row!;
    return { user: { id, email: stored, role: role as UserRole, tenantId, createdAt }, ...session };
  }

  /**
   * Takes one attempt from each limiter: `429` when any is past its points. A Redis failure beyond
   * the in-memory insurance leaves the attempt unthrottled rather than refuse every sign-in.
   */
  private async take(limits: [RateLimiterRedis, string][]): Promise<void> {
    const taken = await Promise.allSettled(limits.map(([limiter, key]) => limiter.consume(key, 1)));
    const refusals = taken.flatMap((result) =>
      result.status === "rejected" && result.reason instanceof RateLimiterRes ? [result.reason] : [],
    );
    if (refusals.length === 0) return;
    const waitMs = Math.max(...refusals.map((refusal) => refusal.msBeforeNext));
    throw new AppError(
      429,
      "rate_limited",
      "Too many failed sign-ins for this e-mail or from this address; retry later.",
      undefined,
      { "retry-after": String(Math.max(1, Math.ceil(waitMs / 1000))) },
    );
  }
}
