import { CONFIG, type AuthConfig, type RedisConfig } from "../config/sections.js";
import { Inject, Injectable } from "@nestjs/common";
import type { RedisClient } from "../redis/redis.js";
import { RateLimiterMemory, RateLimiterRedis } from "rate-limiter-flexible";
import { consumeOrRefuse } from "../common/rate-limit.js";
import { REDIS } from "../redis/redis.module.js";
import type { Principal } from "./principal.js";

/**
 * Admin requests per minute, counted in Redis so the limits hold across API replicas (while Redis
 * does not answer, each replica counts alone): ADMIN_RATE_LIMIT per API key or console user, and
 * ADMIN_TENANT_RATE_LIMIT per tenant across all its keys and users, so minting keys does not
 * multiply a tenant's budget. Operators belong to no tenant: only their own limit applies. A caller
 * over a limit gets `429 rate_limited` with `Retry-After`; other keys and tenants are not affected.
 */
@Injectable()
export class AdminRateLimit {
  private readonly perKey: RateLimiterRedis;
  private readonly perTenant: RateLimiterRedis;

  constructor(
    @Inject(REDIS) redis: RedisClient,
    @Inject(CONFIG.auth) private readonly config: AuthConfig,
    @Inject(CONFIG.redis) redisConfig: RedisConfig,
  ) {
    const limiter = (name: string, points: number) =>
      new RateLimiterRedis({
        points,
        duration: 60,
        storeClient: redis,
        keyPrefix: `${redisConfig.redisPrefix}:${name}`,
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory({ points, duration: 60 }),
      });
    this.perKey = limiter("admin-rate", config.adminRateLimit);
    this.perTenant = limiter("admin-tenant-rate", config.adminTenantRateLimit);
  }

  /**
   * Counts one request of `principal`; throws `429 rate_limited` over a limit. The tenant is counted
   * only for a request its key's own limit let through.
   */
  async consume(principal: Principal): Promise<void> {
    await consumeOrRefuse(
      this.perKey,
      principal.keyId ?? `user:${principal.userId}`,
      `This ${principal.keyId === null ? "user" : "API key"} is over its limit of ${this.config.adminRateLimit} admin requests per minute; retry later.`,
    );
    if (principal.tenantId === null) return;
    await consumeOrRefuse(
      this.perTenant,
      principal.tenantId,
      `This tenant is over its limit of ${this.config.adminTenantRateLimit} admin requests per minute across its API keys and users; retry later.`,
    );
  }
}
