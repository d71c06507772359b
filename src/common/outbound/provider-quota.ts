// Paces outbound provider calls to the provider's budgets (PROVIDER_RATE_LIMITS), counted in Redis so
// that every worker process and every tenant of this Leadgate share them, as the provider counts
// them (one client). rate-limiter-flexible does the counting; this file chooses the keys.
import { setTimeout as sleep } from "node:timers/promises";
import type { Redis } from "ioredis";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import type { ApiProvider, ProviderRateLimit } from "../../config/config.js";
import { WaitRequired } from "./errors.js";

/**
 * A provider's "second", with 10% headroom: the provider times calls by their arrival, and two calls
 * granted just over a second apart may arrive just under one (network and event-loop jitter).
 */
const SECOND = 1.1;
const DAY = 86_400;
/**
 * A call waits in process for its turn while the whole wait stays this short: under a per-second
 * budget every turn is less than a second away, and a job that went `waiting` instead would lose
 * the calls it already made in this run (a Yelp lead-upsert makes two). Beyond (a long backlog on
 * a busy endpoint), the job goes `waiting` (quota) and frees its worker slot for other work.
 */
const MAX_INLINE_WAIT_MS = 30_000;

/**
 * rate-limiter-flexible's own increment script with the window in milliseconds (PX from the
 * limiter's `duration`, which it passes as ARGV[4]) instead of whole seconds, so SECOND can be 1.1.
 * For whole seconds it does what the built-in script does.
 */
const INCR_TTL_MS = `local ms = math.floor(tonumber(ARGV[4]) * 1000)
redis.call('set', KEYS[1], 0, 'PX', ms, 'NX')
local consumed = redis.call('incrby', KEYS[1], ARGV[1])
local ttl = redis.call('pttl', KEYS[1])
if ttl == -1 then
  redis.call('pexpire', KEYS[1], ms)
  ttl = ms
end
return {consumed, ttl}`;

interface Budget {
  limiter: RateLimiterRedis;
  /** Keys of one endpoint's budget: a rate of N/s is N slots of one call per SECOND each. */
  slots: number;
}

/**
 * Budgets per provider: a per-second budget per endpoint (`GET /v3/leads/{id}`: method and path
 * template, so every lead shares it), and a daily budget over all of the provider's endpoints.
 * A rate of N/s is N keys ("slots") that each grant one call per SECOND: a slot's next call comes a
 * full SECOND after its last, so any window of a second holds at most N calls (a single counter of
 * N per window would allow 2N across a window boundary). While Redis is not ready each process
 * counts alone (the library's insurance limiter), so pacing holds per process.
 */
export class ProviderQuota {
  private readonly perSecond = new Map<string, Budget>();
  private readonly perDay = new Map<string, RateLimiterRedis>();

  constructor(redis: Redis, redisPrefix: string, limits: Record<ApiProvider, ProviderRateLimit>) {
    const limiter = (name: string, points: number, duration: number) =>
      new RateLimiterRedis({
        storeClient: redis,
        keyPrefix: `${redisPrefix}:quota:${name}`,
        points,
        duration,
        customIncrTtlLuaScript: INCR_TTL_MS,
        rejectIfRedisNotReady: true,
        insuranceLimiter: new RateLimiterMemory({ points, duration }),
      });
    for (const [provider, { perSecond, perDay }] of Object.entries(limits)) {
      if (perSecond !== undefined)
        this.perSecond.set(provider, { limiter: limiter(`${provider}:second`, 1, SECOND), slots: perSecond });
      if (perDay !== undefined) this.perDay.set(provider, limiter(`${provider}:day`, perDay, DAY));
    }
  }

  /**
   * Takes one call of `endpoint` from the provider's budgets: resolves when the call may go (after a
   * short wait in process), or throws `WaitRequired("quota", retryAt)` when its turn is further off.
   */
  async take(provider: string, endpoint: string): Promise<void> {
    const budget = this.perSecond.get(provider);
    if (budget) await this.turn(budget, endpoint);
    // After the per-second turn, so that a call still to wait for its second spends no daily budget.
    const daily = this.perDay.get(provider);
    const refusedMs = daily ? await over(daily.consume(provider)) : undefined;
    if (refusedMs !== undefined) throw quotaWait(refusedMs);
  }

  /** Waits in process for a free slot of the endpoint, at most MAX_INLINE_WAIT_MS in all. */
  private async turn(budget: Budget, endpoint: string): Promise<void> {
    const started = Date.now();
    for (;;) {
      const waitMs = await this.slot(budget, endpoint);
      if (waitMs === 0) return;
      if (Date.now() - started + waitMs > MAX_INLINE_WAIT_MS) throw quotaWait(waitMs);
      await sleep(waitMs);
    }
  }

  /** Takes a free slot of the endpoint (0), or answers how long until the first one frees up. */
  private async slot({ limiter, slots }: Budget, endpoint: string): Promise<number> {
    const first = Math.floor(Math.random() * slots); // spread callers over the slots
    let waitMs = Infinity;
    for (let i = 0; i < slots; i++) {
      const refused = await over(limiter.consume(`${endpoint}:${(first + i) % slots}`));
      if (refused === undefined) return 0;
      waitMs = Math.min(waitMs, refused);
    }
    return Math.max(1, waitMs);
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
