import { Inject, Injectable, Logger } from "@nestjs/common";
import type { Redis } from "ioredis";
import { AppError } from "../common/app-error.js";
import { NaturalBatcher } from "../common/natural-batcher.js";
import { withTimeout } from "../common/with-timeout.js";
import type { AppConfig } from "../config/config.js";
import { APP_CONFIG } from "../config/config.module.js";
import { Metrics } from "../observability/metrics.js";
import { REDIS } from "../redis/redis.module.js";

const REDIS_TIMEOUT_MS = 500;

/**
 * The per-connection ingest rate limit: at most WEBHOOK_RATE_LIMIT deliveries per connection in each
 * fixed window of WEBHOOK_RATE_LIMIT_WINDOW_SECONDS, counted in Redis so the limit holds across API
 * replicas. Concurrent checks share one pipelined round trip (natural batching). When Redis does
 * not answer, deliveries are let through: losing a lead to a rate limiter's outage is worse than
 * a burst.
 */
@Injectable()
export class RateLimiter {
  private readonly logger = new Logger("rate-limit");
  private readonly windowMs: number;
  private readonly counts = new NaturalBatcher<string, number | undefined>((ids) => this.count(ids), {
    maxBatch: 1000,
  });

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    this.windowMs = config.webhookRateLimitWindowSeconds * 1000;
  }

  /** Counts the delivery against its connection; throws `429 rate_limited` over the limit. */
  async check(connectionId: string): Promise<void> {
    if (this.config.webhookRateLimit === 0) return;
    const count = await this.counts.submit(connectionId);
    if (count === undefined || count <= this.config.webhookRateLimit) return;
    const retryAfter = Math.max(1, Math.ceil((this.windowMs - (Date.now() % this.windowMs)) / 1000));
    throw new AppError(
      429,
      "rate_limited",
      `This connection is over its limit of ${this.config.webhookRateLimit} deliveries per ${this.config.webhookRateLimitWindowSeconds} s; retry later.`,
      undefined,
      { "retry-after": String(retryAfter) },
    );
  }

  /**
   * The batch's deliveries counted per connection in one round trip: one INCRBY per connection
   * (after a SET NX that creates the window's key with its expiry), so a burst on one connection
   * costs two commands, not two per delivery. Each delivery gets its own position in the count; undefined: not counted.
   */
  private async count(ids: string[]): Promise<(number | undefined)[]> {
    if (this.redis.status !== "ready") return this.skipped(ids, `redis is ${this.redis.status}`);
    const window = Math.floor(Date.now() / this.windowMs);
    const perConnection = new Map<string, number>();
    for (const id of ids) perConnection.set(id, (perConnection.get(id) ?? 0) + 1);
    const connections = [...perConnection];
    const pipeline = this.redis.pipeline();
    for (const [id, n] of connections) {
      const key = `${this.config.redisPrefix}:rate:${id}:${window}`;
      // The window's key is created with its expiry (SET NX: any Redis since 2.6.12), then counted.
      pipeline.set(key, 0, "PX", this.windowMs * 2, "NX").incrby(key, n);
    }
    try {
      const results = await withTimeout(pipeline.exec(), REDIS_TIMEOUT_MS, "redis");
      // The count the batch started from, per connection; each delivery then takes the next one.
      const next = new Map<string, number>();
      connections.forEach(([id, n], index) => {
        const [error, total] = results?.[index * 2 + 1] ?? [new Error("no result")];
        if (!error) next.set(id, Number(total) - n + 1);
      });
      return ids.map((id) => {
        const position = next.get(id);
        if (position === undefined) return undefined;
        next.set(id, position + 1);
        return position;
      });
    } catch (error) {
      return this.skipped(ids, error instanceof Error ? error.message : String(error));
    }
  }

  private skipped(ids: string[], reason: string): undefined[] {
    this.metrics.rateLimitSkipped.inc(ids.length);
    this.logger.warn({
      msg: "rate limit not checked; deliveries let through",
      deliveries: ids.length,
      reason,
    });
    return ids.map(() => undefined);
  }
}
