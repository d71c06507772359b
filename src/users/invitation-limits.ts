import { CONFIG, type RedisConfig } from "../config/sections.js";
import { Inject, Injectable } from "@nestjs/common";
import type { RedisClient } from "../redis/redis.js";
import type { RateLimiterRedis } from "rate-limiter-flexible";
import { consumeOrRefuse, sharedLimiter } from "../common/rate-limit.js";
import { REDIS } from "../redis/redis.module.js";

/** Invitations one user may be sent per hour (its first, at its creation, included). */
export const INVITATIONS_PER_USER_HOUR = 3;
/** Invitations a tenant's users may be sent per day, new users and re-invitations alike. */
export const INVITATIONS_PER_TENANT_DAY = 20;

/** Gives back what `take` counted: the invitation was not issued after all. */
export type GiveBack = () => Promise<void>;

/**
 * What invitations may send, whoever asks: INVITATIONS_PER_USER_HOUR mails to one user and
 * INVITATIONS_PER_TENANT_DAY to a tenant's users (operators belong to no tenant: only their own
 * hourly limit applies). Without them any admin key could make Leadgate mail an address as often as
 * it likes. Counted in Redis, so the limits hold across API replicas (while Redis does not answer,
 * each replica counts alone). Over a limit: `429 rate_limited` with Retry-After, and nothing is
 * written or sent.
 */
@Injectable()
export class InvitationLimits {
  private readonly perUser: RateLimiterRedis;
  private readonly perTenant: RateLimiterRedis;

  constructor(@Inject(REDIS) redis: RedisClient, @Inject(CONFIG.redis) redisConfig: RedisConfig) {
    const limiter = (name: string, points: number, duration: number) =>
      sharedLimiter(redis, redisConfig.redisPrefix, name, points, duration);
    this.perUser = limiter("invitations-user", INVITATIONS_PER_USER_HOUR, 3600);
    this.perTenant = limiter("invitations-tenant", INVITATIONS_PER_TENANT_DAY, 86_400);
  }

  /**
   * Counts one invitation of the user `userId` (undefined: a user not created yet) of `tenantId`
   * (null: an operator) before it is issued; throws `429 rate_limited` past either limit, with
   * nothing counted then. Answers how to give the count back if the invitation is not issued.
   */
  async take(invitation: { userId?: string; tenantId: string | null }): Promise<GiveBack> {
    const counted: [RateLimiterRedis, string][] = [];
    const giveBack = async () => {
      await Promise.all(counted.map(([limiter, key]) => limiter.reward(key, 1).catch(() => undefined)));
    };
    try {
      if (invitation.userId !== undefined) {
        await consumeOrRefuse(
          this.perUser,
          invitation.userId,
          `This user was sent ${INVITATIONS_PER_USER_HOUR} invitations in the last hour, its limit; retry later.`,
        );
        counted.push([this.perUser, invitation.userId]);
      }
      if (invitation.tenantId !== null) {
        await consumeOrRefuse(
          this.perTenant,
          invitation.tenantId,
          `This tenant's users were sent ${INVITATIONS_PER_TENANT_DAY} invitations in the last day, its limit; retry later.`,
        );
        counted.push([this.perTenant, invitation.tenantId]);
      }
    } catch (refused) {
      await giveBack();
      throw refused;
    }
    return giveBack;
  }

  /** Counts a new user's first invitation (issued with the user) toward its hourly limit. */
  async first(userId: string): Promise<void> {
    await this.perUser.consume(userId, 1).catch(() => undefined);
  }
}
