// Paces outbound provider calls to the provider's budgets (PROVIDER_RATE_LIMITS), counted in Redis so
// that every worker process and every tenant of this Leadgate share them, as the provider counts
// them (one client). rate-limiter-flexible does the counting; this file chooses the keys.
import { setTimeout as sleep } from "node:timers/promises";
import type { RedisClient } from "../../redis/redis.js";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import type { ProviderRateLimit } from "../../config/config.js";
import { WaitRequired } from "./errors.js";

const DAY_SECONDS = 86_400;
/**
 * A call waits in process for its turn while the whole wait stays this short: under a per-second
 * budget turns come several times a second, and a job that went `waiting` instead would lose the
 * calls it already made in this run (a Yelp lead-upsert makes two). Beyond (a long backlog on a busy
 * endpoint), the job goes `waiting` (quota) and frees its worker slot for other work.
 */
const MAX_INLINE_WAIT_MS = 30_000;
/** While every slot is taken, the first caller in line asks again this often. */
const POLL_MS = 50;

interface Budget {
  limiter: RateLimiterRedis;
  /** A rate of N/s is N slots per endpoint. */
  slots: number;
}

/**
 * Budgets per provider: a per-second budget per endpoint (`GET /v3/leads/{id}`: method and path
 * template, so every lead shares it), and a daily budget over all of the provider's endpoints.
 *
 * A rate of N/s is N slots per endpoint, each a Redis key. A call takes a free slot, holds it while
 * it is in flight, and leaves it blocked for one second after it ended. So two calls on one slot
 * reach the provider more than a second apart however long either took on the way (the second
 * starts after the first was answered, so after it arrived), and any second of the provider's
 * clock sees at most N calls per endpoint. (A counter of N per window would let 2N through across
 * a window's edge, and a fixed spacing would not survive network or event-loop delays.) A slot
 * whose holder died frees itself once the call would have timed out. While Redis is not ready each
 * process counts alone (the library's insurance limiter), so pacing then holds per process.
 */
export class ProviderQuota {
  private readonly perSecond = new Map<string, Budget>();
  private readonly perDay = new Map<string, RateLimiterRedis>();
  /**
   * This process's callers of each endpoint, in line: only the first asks Redis for a slot, so
   * waiting callers neither stampede Redis nor overtake each other.
   */
  private readonly lines = new Map<string, Promise<unknown>>();

  /** @param callTimeoutMs the longest a call can hold its slot (SIDE_EFFECT_TIMEOUT_MS) */
  constructor(
    redis: RedisClient,
    redisPrefix: string,
    limits: Readonly<Record<string, ProviderRateLimit>>,
    callTimeoutMs: number,
  ) {
    const limiter = (name: string, points: number, duration: number) =>
      new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: `${redisPrefix}:quota:${name}`,
        points,
        duration,
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory({ points, duration }),
      });
    const holdSeconds = Math.ceil(callTimeoutMs / 1000) + 1;
    for (const [provider, { perSecond, perDay }] of Object.entries(limits)) {
      if (perSecond !== undefined)
        this.perSecond.set(provider, {
          limiter: limiter(`${provider}:slot`, 1, holdSeconds),
          slots: perSecond,
        });
      if (perDay !== undefined) this.perDay.set(provider, limiter(`${provider}:day`, perDay, DAY_SECONDS));
    }
  }

  /**
   * Runs `call` (one call of `endpoint`) within the provider's budgets: after a short wait in
   * process for its turn, or not at all: `WaitRequired("quota", retryAt)` when its turn is further off.
   */
  async paced<T>(provider: string, endpoint: string, call: () => Promise<T>): Promise<T> {
    const started = Date.now();
    const budget = this.perSecond.get(provider);
    const slot = budget
      ? await this.inLine(`${provider} ${endpoint}`, () => this.takeSlot(budget, endpoint, started))
      : undefined;
    try {
      // After the per-second turn, so that a call still to wait for its second spends no daily budget.
      const daily = this.perDay.get(provider);
      const refusedMs = daily ? await over(daily.consume(provider)) : undefined;
      if (refusedMs !== undefined) throw quotaWait(refusedMs);
      return await call();
    } finally {
      // Free again one second from now; if this fails, the hold expires by itself.
      if (slot !== undefined) await budget!.limiter.block(slot, 1).catch(() => undefined);
    }
  }

  /** Runs `run` once every caller before it in the line is done (whether it got a slot or not). */
  private inLine<T>(line: string, run: () => Promise<T>): Promise<T> {
    const turn = (this.lines.get(line) ?? Promise.resolve()).then(run);
    const done = turn.catch(() => undefined);
    this.lines.set(line, done);
    void done.then(() => this.lines.get(line) === done && this.lines.delete(line));
    return turn;
  }

  /** Takes a free slot of the endpoint (its key), waiting while the whole wait since `started` stays short. */
  private async takeSlot({ limiter, slots }: Budget, endpoint: string, started: number): Promise<string> {
    for (;;) {
      let waitMs = POLL_MS;
      for (let i = 0; i < slots; i++) {
        const slot = `${endpoint}:${i}`;
        const refusedMs = await over(limiter.consume(slot));
        if (refusedMs === undefined) return slot;
        waitMs = Math.min(waitMs, Math.max(1, refusedMs));
      }
      if (Date.now() - started + waitMs > MAX_INLINE_WAIT_MS) throw quotaWait(waitMs);
      await sleep(waitMs);
    }
  }
}

/** undefined when the call was granted; when refused, the ms before the budget frees up. */
async function over(consumed: Promise<RateLimiterRes>): Promise<number | undefined> {
  try {
    await consumed;
    return undefined;
  } catch (refusal) {
    // The library rejects with a RateLimiterRes when over the budget, with an Error when it failed.
    if (refusal instanceof RateLimiterRes) return refusal.msBeforeNext;
    throw refusal;
  }
}

function quotaWait(ms: number): WaitRequired {
  return new WaitRequired("quota", new Date(Date.now() + ms));
}
