import { CONFIG, type IngestConfig, type RedisConfig } from "../config/sections.js";
import { Inject, Injectable, Logger } from "@nestjs/common";
import type { RedisClient } from "../redis/redis.js";
import { AppError } from "../common/app-error.js";
import { NaturalBatcher } from "../common/natural-batcher.js";
import { withTimeout } from "../common/with-timeout.js";
import { Metrics } from "../observability/metrics.js";
import { REDIS } from "../redis/redis.module.js";

const REDIS_TIMEOUT_MS = 500;
/**
 * At most this many deliveries are reserved in one Redis round trip: at the default limit (12,000 a
 * minute) a busy connection costs one round trip per 200 deliveries, and another replica's unused
 * reservations hold back at most 300 (2.5 %) of it.
 */
const MAX_LEASE = 200;
/**
 * Leases this large are renewed ahead of need, once half is used, so a busy connection's deliveries
 * do not wait for Redis; a smaller one (a limit under 200 per window) only when it has run out, which
 * keeps a small limit's unused reservations to less than one lease.
 */
const MIN_RENEWED_LEASE = 10;

/** The window's key created with its expiry (two windows) if it is new, then the reservation added: the count now. */
const RESERVE = `redis.call('SET', KEYS[1], 0, 'PX', ARGV[2], 'NX') return redis.call('INCRBY', KEYS[1], ARGV[1])`;

/** A reservation asked of Redis: for a delivery that waits for it, or a lease renewed ahead of need. */
interface Reservation {
  connectionId: string;
  waiting: boolean;
}

/**
 * How many deliveries one Redis round trip reserves for a connection: a twentieth of the limit, so
 * a replica's unused reservation (which another replica cannot use) stays small; 1 for small
 * limits, which keeps them exact.
 */
export function leaseSize(limit: number): number {
  return Math.min(MAX_LEASE, Math.max(1, Math.floor(limit / 20)));
}

/**
 * What a reservation got: `reserved` deliveries were added to the window's count, which then stood
 * at `total`; the part of them still under `limit` is granted (0 once the window is full).
 */
export function granted(limit: number, total: number, reserved: number): number {
  return Math.min(reserved, Math.max(0, limit - (total - reserved)));
}

/**
 * The per-connection ingest rate limit: at most WEBHOOK_RATE_LIMIT deliveries per connection in each
 * fixed window of WEBHOOK_RATE_LIMIT_WINDOW_SECONDS, counted in Redis so the limit holds across API
 * replicas. A replica reserves deliveries in leases (`leaseSize`) and hands them out locally, so a
 * busy connection costs a Redis round trip per lease, not per delivery; concurrent reservations
 * go out together, one script per connection (natural batching). A lease of 10 or more is renewed once half of
 * it is used, so a busy connection's deliveries do not wait for that round trip (+3.6 % ingest
 * throughput, docs/benchmarks.md). Never more than the limit is accepted; a
 * connection may be refused while other replicas hold unused reservations (less than one lease
 * each, one and a half for a lease renewed ahead). When Redis does not answer, deliveries are let
 * through: losing a lead to a rate limiter's outage is worse than a burst.
 *
 * Hand-made on purpose, beside rate-limiter-flexible (which the admin limit and the pre-auth budget
 * use): `node bench/rate-limiter.mjs` (2026-12-02, this 2-core machine, 60,000 admits over 32
 * connections) measured rate-limiter-flexible's `consume` per delivery at 10–11× the API CPU per
 * admit (12.8–14.1 µs against 1.1–1.4 µs), ~100× the Redis CPU and 98× the Redis commands (4 per
 * admit against ~2 per lease of 50, the cap then); at 2,400 deliveries/s, twice the peer's ingest, that is 7–9 %
 * of a core in the API process against under 1 %. Both admit exactly the limit per window.
 */
@Injectable()
export class RateLimiter {
  private readonly logger = new Logger("rate-limit");
  private readonly windowMs: number;
  private readonly lease: number;
  /** Reserved deliveries not yet handed out, per connection, in the current window. */
  private leases = { window: 0, left: new Map<string, number>() };
  /** What is left of a lease when the next one is reserved (-1: never ahead, the lease is too small). */
  private readonly renewAt: number;
  private readonly reservations = new NaturalBatcher<Reservation, boolean | undefined>(
    (requests) => this.reserve(requests),
    { maxBatch: 1000 },
  );

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(CONFIG.ingest) private readonly config: IngestConfig,
    @Inject(CONFIG.redis) private readonly redisConfig: RedisConfig,
    private readonly metrics: Metrics,
  ) {
    this.windowMs = config.webhookRateLimitWindowSeconds * 1000;
    this.lease = leaseSize(config.webhookRateLimit);
    this.renewAt = this.lease >= MIN_RENEWED_LEASE ? Math.floor(this.lease / 2) : -1;
  }

  /** Counts the delivery against its connection; throws `429 rate_limited` over the limit. */
  async check(connectionId: string): Promise<void> {
    if (this.config.webhookRateLimit === 0) return;
    if (this.leased(connectionId, this.window())) return;
    // false: over the limit; undefined: Redis did not answer, so not counted (let through).
    if ((await this.reservations.submit({ connectionId, waiting: true })) !== false) return;
    const retryAfter = Math.max(1, Math.ceil((this.windowMs - (Date.now() % this.windowMs)) / 1000));
    throw new AppError(
      429,
      "rate_limited",
      `This connection is over its limit of ${this.config.webhookRateLimit} deliveries per ${this.config.webhookRateLimitWindowSeconds} s; retry later.`,
      undefined,
      { "retry-after": String(retryAfter) },
    );
  }

  /** The window's leases. A past window's are worth nothing (a reservation that outlived its window). */
  private leasesIn(window: number): Map<string, number> {
    if (window > this.leases.window) this.leases = { window, left: new Map() };
    return window === this.leases.window ? this.leases.left : new Map<string, number>();
  }

  /**
   * Hands out one delivery of the connection's lease for this window, if it has one left (false
   * else). Half a lease used: the next one is reserved now, so deliveries do not wait for it.
   */
  private leased(connectionId: string, window: number): boolean {
    const left = this.take(connectionId, window);
    if (left === undefined) return false;
    if (left === this.renewAt) {
      this.reservations.submit({ connectionId, waiting: false }).catch(() => undefined); // tried again when the lease runs out
    }
    return true;
  }

  /** Hands out one delivery of the connection's lease for this window: what is left of it then, or undefined (none left). */
  private take(connectionId: string, window: number): number | undefined {
    const leases = this.leasesIn(window);
    const left = leases.get(connectionId) ?? 0;
    if (left === 0) return undefined;
    leases.set(connectionId, left - 1);
    return left - 1;
  }

  /** One answer per request: a delivery passes (true), is over the limit (false) or was not counted (undefined). */
  private async reserve(all: Reservation[]): Promise<(boolean | undefined)[]> {
    // Deliveries that queued while a renewal was in flight: what it leased serves them first.
    const window = this.window();
    const served = all.map(({ connectionId, waiting }) => waiting && this.leased(connectionId, window));
    const requests = all.filter((_, index) => !served[index]);
    const answers = await this.reserveInRedis(requests);
    return served.map((pass) => (pass ? true : answers.shift()));
  }

  private window(): number {
    return Math.floor(Date.now() / this.windowMs);
  }

  /**
   * Reserves the batch's deliveries per connection in one round trip: per connection, a SET NX that
   * creates the window's key with its expiry, then one INCRBY of the deliveries waiting or of a
   * lease, whichever is more. Deliveries within the grant pass; what is left of it is kept locally.
   * A renewal ahead of need waits for nothing: its whole grant is kept.
   */
  private async reserveInRedis(requests: Reservation[]): Promise<(boolean | undefined)[]> {
    if (requests.length === 0) return [];
    const deliveries = requests.filter((request) => request.waiting).length;
    if (this.redis.status !== "ready")
      return this.skipped(requests, deliveries, `redis is ${this.redis.status}`);
    const window = this.window();
    const waiting = new Map<string, number>();
    for (const { connectionId, waiting: delivery } of requests) {
      waiting.set(connectionId, (waiting.get(connectionId) ?? 0) + (delivery ? 1 : 0));
    }
    const connections = [...waiting].map(([id, n]) => ({ id, reserved: Math.max(n, this.lease) }));
    let results: [Error | null, unknown][];
    try {
      results = await withTimeout(this.count(connections, window), REDIS_TIMEOUT_MS, "redis");
    } catch (error) {
      return this.skipped(requests, deliveries, error instanceof Error ? error.message : String(error));
    }
    // Deliveries each connection may still pass in this batch; the rest of its grant is leased.
    const passes = new Map<string, number>();
    connections.forEach(({ id, reserved }, index) => {
      const [error, total] = results[index] ?? [new Error("no result")];
      if (error) return; // not counted: let through
      const grant = granted(this.config.webhookRateLimit, Number(total), reserved);
      const pass = Math.min(grant, waiting.get(id)!);
      passes.set(id, pass);
      const leases = this.leasesIn(window);
      leases.set(id, (leases.get(id) ?? 0) + grant - pass);
    });
    return requests.map(({ connectionId, waiting: delivery }) => {
      const pass = passes.get(connectionId);
      if (!delivery || pass === undefined) return undefined;
      passes.set(connectionId, pass - 1);
      return pass > 0;
    });
  }

  /**
   * Per connection, one RESERVE script (SET NX, then INCRBY): the INCRBY's reply. The commands of a
   * batch go out together: in one write on a cluster (the client pipelines automatically, one round
   * trip per master, in parallel), back to back on one server. Not a `pipeline()`: on a client that
   * also carries BullMQ's 64 scripts, building one costs 50 µs (docs/benchmarks.md).
   */
  private async count(
    connections: { id: string; reserved: number }[],
    window: number,
  ): Promise<[Error | null, unknown][]> {
    const ttl = this.windowMs * 2;
    return Promise.all(
      connections.map(({ id, reserved }) =>
        this.redis
          .eval(RESERVE, 1, `${this.redisConfig.redisPrefix}:rate:${id}:${window}`, reserved, ttl)
          .then(
            (total): [null, unknown] => [null, total],
            (error: Error): [Error, null] => [error, null],
          ),
      ),
    );
  }

  /** Redis did not answer: the waiting deliveries pass uncounted (a renewal is tried again when its lease runs out). */
  private skipped(requests: Reservation[], deliveries: number, reason: string): undefined[] {
    if (deliveries > 0) {
      this.metrics.rateLimitSkipped.inc(deliveries);
      this.logger.warn({ msg: "rate limit not checked; deliveries let through", deliveries, reason });
    }
    return requests.map(() => undefined);
  }
}
