// Read-your-writes with a read replica (api.md "Running", DATABASE_REPLICA_URL): for 5 s after an
// API key or console user changed something, its admin lists and reports read the primary. The
// mark lives in Redis, so it holds across every API process; without a replica nothing is marked.
import { CONFIG, type DatabaseConfig, type RedisConfig } from "../config/sections.js";
import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  Logger,
  type NestInterceptor,
} from "@nestjs/common";
import { mergeMap, type Observable } from "rxjs";
import type { RedisClient } from "../redis/redis.js";
import { REDIS } from "../redis/redis.module.js";
import { isRead } from "../users/session-auth.js";
import type { FastifyRequest } from "fastify";
import type { Principal } from "./principal.js";

/** How long after its write a principal's lists read the primary. */
export const READ_YOUR_WRITES_MS = 5_000;

const logger = new Logger("read-replica");

@Injectable()
export class RecentWrites {
  /** Marks are needed only where lists may read a replica. */
  readonly enabled: boolean;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(CONFIG.redis) private readonly redisConfig: RedisConfig,
    @Inject(CONFIG.database) database: DatabaseConfig,
  ) {
    this.enabled = database.databaseReplicaUrl !== undefined;
  }

  private key(principal: Principal): string {
    return `${this.redisConfig.redisPrefix}:wrote:${principal.keyId ?? `user:${principal.userId}`}`;
  }

  /** Records that `principal` just changed something (one key with a 5 s TTL). */
  async mark(principal: Principal): Promise<void> {
    if (!this.enabled) return;
    try {
      await this.redis.set(this.key(principal), "1", "PX", READ_YOUR_WRITES_MS);
    } catch (error) {
      // While Redis does not answer, wroteRecently answers true for everyone: lists read the primary.
      logger.warn({
        msg: "could not mark a write",
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  /** Whether `principal` changed something in the last 5 s; true when Redis does not answer. */
  async wroteRecently(principal: Principal): Promise<boolean> {
    try {
      return (await this.redis.exists(this.key(principal))) === 1;
    } catch {
      return true;
    }
  }
}

/**
 * On every admin change request (anything but GET and HEAD) that succeeded, marks its principal's
 * write once the handler returned, before the answer leaves: a list read right after the answer
 * already sees the mark. A refused change (an error) wrote nothing and marks nothing: an admin
 * change commits with its audit row in one transaction, or not at all.
 */
@Injectable()
export class RecentWritesInterceptor implements NestInterceptor {
  constructor(private readonly writes: RecentWrites) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<FastifyRequest & { principal?: Principal }>();
    const principal = request.principal;
    if (!this.writes.enabled || principal === undefined || isRead(request.method)) return next.handle();
    return next.handle().pipe(
      mergeMap(async (value: unknown) => {
        await this.writes.mark(principal);
        return value;
      }),
    );
  }
}
