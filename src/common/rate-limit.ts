import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
} from "rate-limiter-flexible";
import type { RedisClient } from "../redis/redis.js";
import { AppError } from "./app-error.js";

/**
 * `points` per `duration` seconds, counted in Redis under `<prefix>:<name>` so the limit holds
 * across replicas; while Redis does not answer, each process counts alone (its insurance limiter).
 */
export function sharedLimiter(
  redis: RedisClient,
  prefix: string,
  name: string,
  points: number,
  duration: number,
): RateLimiterRedis {
  return new RateLimiterRedis({
    points,
    duration,
    storeClient: redis,
    keyPrefix: `${prefix}:${name}`,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory({ points, duration }),
  });
}

/**
 * Counts one point of `key`; past the limiter's points throws `429 rate_limited` with `message`
 * and a Retry-After of when the next point frees up (at least 1 s). Other failures (a store that
 * does not answer and no insurance limiter) are thrown as they are.
 */
export async function consumeOrRefuse(
  limiter: RateLimiterAbstract,
  key: string,
  message: string,
): Promise<void> {
  try {
    await limiter.consume(key);
  } catch (result) {
    if (!(result instanceof RateLimiterRes)) throw result;
    throw new AppError(429, "rate_limited", message, undefined, {
      "retry-after": String(Math.max(1, Math.ceil(result.msBeforeNext / 1000))),
    });
  }
}
