import { CONFIG, type RedisConfig } from "../config/sections.js";
import { Global, Inject, Logger, Module, type OnModuleDestroy } from "@nestjs/common";
import type { RedisClient } from "./redis.js";
import { createRedis } from "./redis.js";

/** Injection token of the process's fail-fast Redis client (health checks, rate limits, enqueue). */
export const REDIS = Symbol("REDIS");

const logger = new Logger("redis");

@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [CONFIG.redis],
      useFactory: (config: RedisConfig): RedisClient => {
        const client = createRedis(config, "fail-fast");
        let down = false;
        client.on("error", (error: Error) => {
          if (!down) logger.warn({ msg: "redis unreachable", error: error.message });
          down = true;
        });
        client.on("ready", () => {
          if (down) logger.log({ msg: "redis reachable again" });
          down = false;
        });
        return client;
      },
    },
  ],
  exports: [REDIS],
})
export class RedisModule implements OnModuleDestroy {
  constructor(@Inject(REDIS) private readonly redis: RedisClient) {}

  onModuleDestroy(): void {
    this.redis.disconnect();
  }
}
