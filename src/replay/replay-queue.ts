import { Injectable, Logger } from "@nestjs/common";
import type { QueueName } from "../queues/queue-names.js";
import { Queues } from "../queues/queues.js";

/** The queue of bulk replays: one BullMQ job per batch, run paced by the worker. */
export const REPLAY_QUEUE = "replay-batch" satisfies QueueName;

export interface ReplayBatchPayload {
  batchId: string;
}

/**
 * Producer of bulk replays. Never throws: the batch row is durable and the replay worker's recovery
 * pass enqueues a batch that did not make it. The job id is the batch's, so enqueueing twice runs it once.
 */
@Injectable()
export class ReplayQueue {
  private readonly logger = new Logger("replay");

  constructor(private readonly queues: Queues) {}

  async enqueue(batchId: string): Promise<void> {
    try {
      this.queues.assertConnected();
      await this.queues.get<ReplayBatchPayload>(REPLAY_QUEUE).add(
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
        msg: "enqueue of a replay batch failed; the replay worker's recovery pass will enqueue it",
        batchId,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
}
