import { Inject, Injectable, Logger, type OnModuleDestroy } from "@nestjs/common";
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { AppConfig } from "../config/config.js";
import { APP_CONFIG } from "../config/config.module.js";
import { REDIS } from "../redis/redis.module.js";

/** The queue of bulk replays: one BullMQ job per batch, run paced by the worker. */
export const REPLAY_QUEUE = "replay-batch";

export interface ReplayBatchPayload {
  batchId: string;
}

/**
 * Producer of bulk replays. Never throws: the batch row is durable and the dispatcher enqueues a
 * batch that did not make it. The job id is the batch's, so enqueueing twice runs it once.
 */
@Injectable()
export class ReplayQueue implements OnModuleDestroy {
  private readonly logger = new Logger("replay");
  readonly queue: Queue<ReplayBatchPayload>;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.queue = new Queue<ReplayBatchPayload>(REPLAY_QUEUE, {
      connection: redis,
      prefix: config.redisPrefix,
    });
    this.queue.on("error", () => undefined); // the shared client's errors are logged by RedisModule
  }

  async enqueue(batchId: string): Promise<void> {
    try {
      if (this.redis.status !== "ready") throw new Error(`redis is ${this.redis.status}`);
      await this.queue.add(
        REPLAY_QUEUE,
        { batchId },
        {
          jobId: `replay.${batchId}`,
          attempts: 20,
          backoff: { type: "exponential", delay: 1_000 },
          removeOnComplete: true,
          removeOnFail: true,
        },
      );
    } catch (error) {
      this.logger.warn({
        msg: "enqueue of a replay batch failed; the dispatcher will enqueue it",
        batchId,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  async onModuleDestroy(): Promise<void> {
    await this.queue.close();
  }
}
