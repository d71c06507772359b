// Sign-in throttling (api.md "Console and users"): per (e-mail, client address) pair, 5 failures
// lock the pair for 60 s, and every failure after a lock locks it again for twice as long, up to 15
// minutes; per client address, 50 failures in 15 minutes refuse that address. An IPv6 client is
// counted per /64 (one subscriber's allocation: rotating within it gains nothing). Nothing is counted
// per e-mail alone, so another address's failures never lock a user out.
import { CONFIG, type RedisConfig } from "../config/sections.js";
import { Inject, Injectable, Logger } from "@nestjs/common";
import ipaddr from "ipaddr.js";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { AppError } from "../common/app-error.js";
import type { RedisClient } from "../redis/redis.js";
import { REDIS } from "../redis/redis.module.js";
import { hashToken } from "./tokens.js";
import { normalizeEmail } from "./user.js";

/** Failures of one pair before its first lock. */
export const PAIR_FAILURES = 5;
export const FIRST_LOCK_SECONDS = 60;
export const MAX_LOCK_SECONDS = 15 * 60;
/** A pair without an attempt this long after its lock (if any) ends is forgotten. */
const PAIR_MEMORY_SECONDS = 15 * 60;
export const ADDRESS_FAILURES = 50;
const ADDRESS_WINDOW_SECONDS = 15 * 60;
/** Pairs the in-memory stand-in (Redis not answering) remembers, oldest forgotten first. */
const MAX_REMEMBERED_PAIRS = 10_000;

/** How long a pair is locked once `failures` attempts failed: none under 5, then 60 s doubling, at most 15 minutes. */
export function lockSeconds(failures: number): number {
  if (failures < PAIR_FAILURES) return 0;
  return Math.min(FIRST_LOCK_SECONDS * 2 ** (failures - PAIR_FAILURES), MAX_LOCK_SECONDS);
}

/**
 * The client address as it is counted: an IPv4 address as it is (also when IPv4-mapped IPv6), an
 * IPv6 address by its /64 (`2001:db8:1:2::/64`); anything else as given.
 */
export function addressKey(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const parsed = ipaddr.parse(ip);
  if (parsed instanceof ipaddr.IPv4) return parsed.toString();
  if (parsed.isIPv4MappedAddress()) return parsed.toIPv4Address().toString();
  const prefix = ipaddr.IPv6.networkAddressFromCIDR(`${parsed.toString()}/64`);
  return `${prefix.toString()}/64`;
}

/**
 * One attempt of a pair, taken atomically before its password is checked, so parallel guesses
 * cannot pass together: refused (the milliseconds its lock has left) while the pair is locked;
 * else counted as a failure until the caller says it succeeded, and when that count reaches 5 (or
 * more) the pair is locked from now on, as `lockSeconds` says. The clock is Redis's, the same for
 * every API replica. KEYS[1] the pair; ARGV: PAIR_FAILURES, FIRST_LOCK_SECONDS and MAX_LOCK_SECONDS
 * in ms, PAIR_MEMORY_SECONDS in ms.
 */
const TAKE_PAIR = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local lockedUntil = tonumber(redis.call('HGET', KEYS[1], 'until') or '0')
if lockedUntil > now then return lockedUntil - now end
local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
local lock = 0
if failures >= tonumber(ARGV[1]) then
  lock = math.min(tonumber(ARGV[2]) * 2 ^ (failures - tonumber(ARGV[1])), tonumber(ARGV[3]))
  redis.call('HSET', KEYS[1], 'until', string.format('%d', now + lock))
end
redis.call('PEXPIRE', KEYS[1], lock + tonumber(ARGV[4]))
return 0`;

/** The pairs as TAKE_PAIR keeps them, in this process: the stand-in while Redis does not answer. */
export class MemoryPairs {
  private readonly pairs = new Map<string, { failures: number; until: number; forgetAt: number }>();

  /** TAKE_PAIR's answer at `now` (ms): 0, counted; else the ms the pair's lock has left. */
  take(key: string, now: number): number {
    const known = this.pairs.get(key);
    const pair = known && known.forgetAt > now ? known : { failures: 0, until: 0, forgetAt: 0 };
    if (pair.until > now) return pair.until - now;
    pair.failures += 1;
    const lock = lockSeconds(pair.failures) * 1000;
    if (lock > 0) pair.until = now + lock;
    pair.forgetAt = now + lock + PAIR_MEMORY_SECONDS * 1000;
    this.pairs.delete(key); // re-inserted last: the map stays in order of use
    this.pairs.set(key, pair);
    if (this.pairs.size > MAX_REMEMBERED_PAIRS) this.pairs.delete(this.pairs.keys().next().value!);
    return 0;
  }

  forget(key: string): void {
    this.pairs.delete(key);
  }
}

/** An attempt let through to its password check; a failure needs nothing more (it was counted). */
export interface SignInAttempt {
  /** The password was right: the pair starts again, the address gets its point back. */
  succeeded(): Promise<void>;
}

const rateLimited = (waitMs: number) =>
  new AppError(
    429,
    "rate_limited",
    "Too many failed sign-ins from this address (for this e-mail, or in all); retry later.",
    undefined,
    { "retry-after": String(Math.max(1, Math.ceil(waitMs / 1000))) },
  );

/**
 * The counts behind sign-in throttling, in Redis so they hold across API replicas; while Redis does
 * not answer, each process counts in memory instead (the pairs in MemoryPairs, the addresses in
 * rate-limiter-flexible's insurance limiter), never leaving sign-ins unthrottled. Used by every
 * check of a password a user types: signing in, and the current password of a change.
 */
@Injectable()
export class SignInThrottle {
  private readonly logger = new Logger("sign-in");
  private readonly perAddress: RateLimiterRedis;
  private readonly memoryPairs = new MemoryPairs();
  private readonly pairPrefix: string;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(CONFIG.redis) redisConfig: RedisConfig,
  ) {
    this.pairPrefix = `${redisConfig.redisPrefix}:login-pair`;
    this.perAddress = new RateLimiterRedis({
      points: ADDRESS_FAILURES,
      duration: ADDRESS_WINDOW_SECONDS,
      storeClient: redis,
      keyPrefix: `${redisConfig.redisPrefix}:login-address`,
      rejectIfRedisNotReady: true,
      insuranceLimiter: new RateLimiterMemory({ points: ADDRESS_FAILURES, duration: ADDRESS_WINDOW_SECONDS }),
    });
  }

  /**
   * Counts an attempt of `email` from `ip` before its password is checked: `429 rate_limited` with
   * Retry-After when the address is over its failures or the pair is locked (then nothing is
   * counted). The attempt counts as a failure unless `succeeded()` is called.
   */
  async attempt(email: string, ip: string): Promise<SignInAttempt> {
    const address = addressKey(ip);
    const pair = `${this.pairPrefix}:${hashToken(normalizeEmail(email))}:${address}`;
    try {
      await this.perAddress.consume(address, 1);
    } catch (refused) {
      if (!(refused instanceof RateLimiterRes)) throw refused;
      throw rateLimited(refused.msBeforeNext);
    }
    const lockedMs = await this.takePair(pair);
    if (lockedMs > 0) {
      await this.perAddress.reward(address, 1).catch(() => undefined);
      throw rateLimited(lockedMs);
    }
    return {
      succeeded: async () => {
        this.memoryPairs.forget(pair);
        await Promise.all([
          this.redis.del(pair).catch(() => undefined),
          this.perAddress.reward(address, 1).catch(() => undefined),
        ]);
      },
    };
  }

  private async takePair(pair: string): Promise<number> {
    try {
      const answer = await this.redis.eval(
        TAKE_PAIR,
        1,
        pair,
        PAIR_FAILURES,
        FIRST_LOCK_SECONDS * 1000,
        MAX_LOCK_SECONDS * 1000,
        PAIR_MEMORY_SECONDS * 1000,
      );
      return Number(answer);
    } catch (error) {
      this.logger.warn({
        msg: "sign-in pair counted in memory: Redis did not answer",
        reason: String(error),
      });
      return this.memoryPairs.take(pair, Date.now());
    }
  }
}
