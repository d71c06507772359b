import { CONFIG, type AuthConfig, type RedisConfig } from "../config/sections.js";
import { Inject, Injectable, Logger } from "@nestjs/common";
import type { RedisClient } from "../redis/redis.js";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { AppError } from "../common/app-error.js";
import { REDIS } from "../redis/redis.module.js";

const WINDOW_SECONDS = 60;
/** IPs remembered as over budget in this process (oldest forgotten first beyond it). */
const MAX_REMEMBERED = 10_000;

/**
 * PREAUTH_FAILURE_LIMIT: failed authentications per client IP per minute (a wrong secret, an unknown
 * connection id, a wrong Yelp URL token, an unknown API key, an OAuth state that opens no attempt).
 * Only failures are counted, after authentication was decided, so a request that authenticates is
 * never refused by the budget. Beyond it, that IP's failures answer `429 rate_limited` with
 * Retry-After instead of 401/404/400.
 *
 * Counted in Redis (rate-limiter-flexible), so the budget holds across API replicas; while Redis
 * does not answer, each process counts in memory instead. An IP found over budget is remembered
 * in memory until its window ends (`exhausted`), which lets callers refuse that IP's requests that
 * cannot authenticate (a connection id that does not exist, a malformed credential) before any
 * database or Redis work.
 */
@Injectable()
export class PreauthBudget {
  private readonly logger = new Logger("preauth");
  private readonly limiter: RateLimiterRedis | undefined;
  /** IP → when its window ends (ms), for IPs this process saw over budget. */
  private readonly exhaustedUntil = new Map<string, number>();

  constructor(
    @Inject(REDIS) redis: RedisClient,
    @Inject(CONFIG.auth) config: AuthConfig,
    @Inject(CONFIG.redis) redisConfig: RedisConfig,
  ) {
    const points = config.preauthFailureLimit;
    if (points === 0) return;
    this.limiter = new RateLimiterRedis({
      storeClient: redis,
      rejectIfRedisNotReady: true,
      keyPrefix: `${redisConfig.redisPrefix}:preauth`,
      points,
      duration: WINDOW_SECONDS,
      inMemoryBlockOnConsumed: points + 1, // over budget: further consumes are refused without Redis
      insuranceLimiter: new RateLimiterMemory({ points, duration: WINDOW_SECONDS }),
    });
  }

  /** True while this process knows the IP to be over budget: its next failure will be refused. */
  exhausted(ip: string): boolean {
    const until = this.exhaustedUntil.get(ip);
    if (until === undefined) return false;
    if (until > Date.now()) return true;
    this.exhaustedUntil.delete(ip);
    return false;
  }

  /** The answer for a request of an exhausted IP that cannot authenticate. */
  refusal(ip: string): AppError {
    return tooMany((this.exhaustedUntil.get(ip) ?? Date.now()) - Date.now());
  }

  /**
   * Counts one failed authentication of `ip`; answers the error to throw: `failure` itself within
   * the budget, `429 rate_limited` beyond it.
   */
  async failed(ip: string, failure: AppError): Promise<AppError> {
    if (this.limiter === undefined) return failure;
    try {
      await this.limiter.consume(ip);
      return failure;
    } catch (result) {
      if (!(result instanceof RateLimiterRes)) return failure;
      if (!this.exhausted(ip)) {
        if (this.exhaustedUntil.size >= MAX_REMEMBERED) {
          this.exhaustedUntil.delete(this.exhaustedUntil.keys().next().value!);
        }
        this.exhaustedUntil.set(ip, Date.now() + result.msBeforeNext);
        this.logger.warn({ msg: "client over its failed-authentication budget", ip });
      }
      return tooMany(result.msBeforeNext);
    }
  }
}

function tooMany(msBeforeNext: number): AppError {
  return new AppError(
    429,
    "rate_limited",
    "Too many failed authentications from this address; retry later.",
    undefined,
    { "retry-after": String(Math.max(1, Math.ceil(msBeforeNext / 1000))) },
  );
}
