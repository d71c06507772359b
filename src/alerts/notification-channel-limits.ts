import { CONFIG, type RedisConfig } from "../config/sections.js";
import { Inject, Injectable } from "@nestjs/common";
import type { RedisClient } from "../redis/redis.js";
import type { RateLimiterRedis } from "rate-limiter-flexible";
import { consumeOrRefuse, sharedLimiter } from "../common/rate-limit.js";
import { REDIS } from "../redis/redis.module.js";

/** Test notifications per channel per minute. */
export const TESTS_PER_MINUTE = 5;
/** Confirmation mails a channel's resend may send per hour. */
export const RESENDS_PER_HOUR = 3;

/**
 * What one channel's admin actions may send, whoever calls: TESTS_PER_MINUTE test notifications
 * and RESENDS_PER_HOUR confirmation mails. Without them the routes would let any key make
 * Leadgate post or mail someone as often as it likes. Counted in Redis, so the limits hold across
 * API replicas (while Redis does not answer, each replica counts alone). Over a limit: `429
 * rate_limited` with Retry-After, and nothing is sent.
 */
@Injectable()
export class ChannelActionLimits {
  private readonly tests: RateLimiterRedis;
  private readonly resends: RateLimiterRedis;

  constructor(@Inject(REDIS) redis: RedisClient, @Inject(CONFIG.redis) redisConfig: RedisConfig) {
    const limiter = (name: string, points: number, duration: number) =>
      sharedLimiter(redis, redisConfig.redisPrefix, name, points, duration);
    this.tests = limiter("channel-tests", TESTS_PER_MINUTE, 60);
    this.resends = limiter("channel-confirmations", RESENDS_PER_HOUR, 3600);
  }

  /** Counts one test notification of the channel; throws `429 rate_limited` past the limit. */
  test(channelId: string): Promise<void> {
    return consumeOrRefuse(
      this.tests,
      channelId,
      `This channel was sent ${TESTS_PER_MINUTE} test notifications in the last minute, its limit; retry later.`,
    );
  }

  /** Counts one resent confirmation of the channel; throws `429 rate_limited` past the limit. */
  resend(channelId: string): Promise<void> {
    return consumeOrRefuse(
      this.resends,
      channelId,
      `This channel's confirmation was resent ${RESENDS_PER_HOUR} times in the last hour, its limit; retry later.`,
    );
  }
}
