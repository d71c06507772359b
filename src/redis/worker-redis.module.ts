import { type BeforeApplicationShutdown, Global, Inject, Module } from "@nestjs/common";
import { Redis } from "ioredis";
import type { AppConfig } from "../config/config.js";
import { APP_CONFIG } from "../config/config.module.js";

/**
 * Injection token of the worker process's BullMQ connection, shared by every worker (operations,
 * bulk replays, retention). Workers block on Redis, so it retries forever instead of failing fast.
 */
export const WORKER_REDIS = Symbol("WORKER_REDIS");

@Global()
@Module({
  providers: [
    {
      provide: WORKER_REDIS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig): Redis => {
        const connection = new Redis(config.redisUrl, { maxRetriesPerRequest: null });
        connection.on("error", () => undefined); // logged by RedisModule's client
        return connection;
      },
    },
  ],
  exports: [WORKER_REDIS],
})
export class WorkerRedisModule implements BeforeApplicationShutdown {
  constructor(@Inject(WORKER_REDIS) private readonly connection: Redis) {}

  /** After every worker closed (onModuleDestroy), so none loses its connection while finishing. */
  beforeApplicationShutdown(): void {
    this.connection.disconnect();
  }
}
