import { type RateLimiterAbstract, RateLimiterRes } from "rate-limiter-flexible";
import { AppError } from "./app-error.js";

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
