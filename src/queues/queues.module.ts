import { CONFIG, type RedisConfig } from "../config/sections.js";
import { type DynamicModule, Module, type Provider } from "@nestjs/common";
import { DiscoveryModule } from "@nestjs/core";
import { BullModule, getQueueToken } from "@nestjs/bullmq";
import type { Queue } from "bullmq";
import type { RedisClient } from "../redis/redis.js";
import { createRedis } from "../redis/redis.js";
import { REDIS } from "../redis/redis.module.js";
import { QUEUE_CONNECTION, QUEUE_ROLE, QueueLifecycle, type QueueRole } from "./queue-lifecycle.js";
import { QUEUE_NAMES, type QueueName, queuePrefix } from "./queue-names.js";
import { Queues } from "./queues.js";

/** Holds the process's BullMQ connection (QUEUE_CONNECTION) for QueuesModule and BullModule. */
@Module({})
class QueueConnectionModule {}

/**
 * The one owner of BullMQ in a process (through @nestjs/bullmq): its Redis connection, the queues
 * of the closed vocabulary (src/queues/queue-names.ts) under REDIS_PREFIX, and the workers'
 * lifecycle (QueueLifecycle). Producers inject `Queues`; workers are `@Processor` classes (one per
 * queue) that the worker process starts. Global, and imported by the process module after the
 * database and Redis modules: global modules are destroyed in reverse order, and the workers must
 * finish their jobs before the database pool closes.
 */
@Module({})
export class QueuesModule {
  /**
   * The API process: producers only, on the process's fail-fast client (REDIS, also the rate
   * limiter's and health check's), so enqueueing never waits on an outage.
   */
  static forApi(): DynamicModule {
    return QueuesModule.create("api", { provide: QUEUE_CONNECTION, useExisting: REDIS });
  }

  /**
   * The worker process: one connection of its own, shared by every worker and producer of the
   * process (each worker adds its blocking duplicate). Workers block on Redis, so it retries
   * forever instead of failing fast; it is closed after every worker stopped.
   */
  static forWorker(): DynamicModule {
    return QueuesModule.create("worker", {
      provide: QUEUE_CONNECTION,
      inject: [CONFIG.redis],
      useFactory: (config: RedisConfig): RedisClient => {
        const connection = createRedis(config, "patient");
        connection.on("error", () => undefined); // logged by RedisModule's client
        return connection;
      },
    });
  }

  private static create(role: QueueRole, connection: Provider): DynamicModule {
    // The connection is seen by this module, BullModule's shared configuration and (exported) the
    // provider quotas, which count in Redis on it.
    const connectionModule: DynamicModule = {
      module: QueueConnectionModule,
      providers: [connection],
      exports: [QUEUE_CONNECTION],
    };
    return {
      module: QueuesModule,
      global: true,
      imports: [
        DiscoveryModule,
        connectionModule,
        BullModule.forRootAsync({
          imports: [connectionModule],
          inject: [CONFIG.redis, QUEUE_CONNECTION],
          useFactory: (config: RedisConfig, client: RedisClient) => ({
            connection: client,
            prefix: config.redisPrefix,
          }),
          // Workers start in QueueLifecycle, after the boot's checks, not when Nest initializes modules.
          extraOptions: { manualRegistration: true },
        }),
        // Each queue's prefix (and so its workers'): REDIS_PREFIX, or its own hash tag on a cluster.
        BullModule.registerQueueAsync(
          ...QUEUE_NAMES.map((name) => ({
            name,
            inject: [CONFIG.redis],
            useFactory: (config: RedisConfig) => ({ prefix: queuePrefix(config, name) }),
          })),
        ),
      ],
      providers: [
        { provide: QUEUE_ROLE, useValue: role },
        {
          provide: Queues,
          inject: [QUEUE_CONNECTION, ...QUEUE_NAMES.map((name) => getQueueToken(name))],
          useFactory: (client: RedisClient, ...queues: Queue[]) =>
            new Queues(
              Object.fromEntries(QUEUE_NAMES.map((name, i) => [name, queues[i]])) as Record<QueueName, Queue>,
              client,
            ),
        },
        QueueLifecycle,
      ],
      exports: [Queues, connectionModule],
    };
  }
}
