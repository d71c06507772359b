import { CONFIG, type AuthConfig, type RedisConfig } from "../config/sections.js";
import { Inject, Injectable } from "@nestjs/common";
import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { AppError } from "../common/app-error.js";
import { REDIS } from "../redis/redis.module.js";

/**
 * ADMIN_RATE_LIMIT: admin requests per API key per minute, counted in Redis so the limit holds
 * across API replicas (while Redis does not answer, each replica counts alone). A key over its
 * limit gets `429 rate_limited` with `Retry-After`; other keys are not affected.
 */
@Injectable()
export class AdminRateLimit {
  private readonly limiter: RateLimiterRedis;

  constructor(
    @Inject(REDIS) redis: Redis,
    @Inject(CONFIG.auth) private readonly config: AuthConfig,
    @Inject(CONFIG.redis) redisConfig: RedisConfig,
  ) {
    const limit = { points: config.adminRateLimit, duration: 60 };
    this.limiter = new RateLimiterRedis({
      ...limit,
      storeClient: redis,
      keyPrefix: `${redisConfig.redisPrefix}:admin-rate`,
      rejectIfRedisNotReady: true,
      insuranceLimiter: new RateLimiterMemory(limit),
    });
  }

  /** Counts one request of the API key `keyId`; throws `429 rate_limited` over the limit. */
  async consume(keyId: string): Promise<void> {
    try {
      await this.limiter.consume(keyId);
    } catch (result) {
      if (!(result instanceof RateLimiterRes)) throw result;
      throw new AppError(
        429,
        "rate_limited",
        `This API key is over its limit of ${this.config.adminRateLimit} admin requests per minute; retry later.`,
        undefined,
        { "retry-after": String(Math.max(1, Math.ceil(result.msBeforeNext / 1000))) },
      );
    }
  }
}
