import { setTimeout as sleep } from "node:timers/promises";
import { Inject, Logger } from "@nestjs/common";
import { OnWorkerEvent, Processor, WorkerHost } from "@nestjs/bullmq";
import type { Job } from "bullmq";
import type { AppConfig } from "../config/config.js";
import { APP_CONFIG } from "../config/config.module.js";
import { JobQueue } from "../jobs/job-queue.js";
import type { BulkFilter } from "./replay.repository.js";
import { ReplayRepository } from "./replay.repository.js";
import { REPLAY_QUEUE, type ReplayBatchPayload } from "./replay-queue.js";

const TICK_MS = 250;

/**
 * Runs bulk replays in the worker, paced so a replay cannot flood destinations: at most
 * REPLAY_RATE_PER_SECOND jobs a second are re-queued per batch, and no more while five seconds' worth
 * of them are still on their way. Progress lives in Postgres (each batch item is pending, queued or
 * skipped), so a batch whose worker died resumes where it stopped on another worker.
 * The BullMQ worker (two batches at once) is started and stopped by the queues module.
 */
@Processor(REPLAY_QUEUE, { concurrency: 2 })
export class ReplayBatchWorker extends WorkerHost {
  private readonly logger = new Logger("replay");
  private closing = false;

  constructor(
    private readonly replays: ReplayRepository,
    private readonly queue: JobQueue,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    super();
  }

  process(job: Job<ReplayBatchPayload>): Promise<void> {
    return this.run(job.data.batchId);
  }

  /** Shutdown began: a running batch stops pacing so the worker can close (see the end of run). */
  @OnWorkerEvent("closing")
  onClosing(): void {
    this.closing = true;
  }

  async run(batchId: string): Promise<void> {
    const batch = await this.replays.findBatch(batchId);
    if (!batch || batch.status === "done") return;
    const statuses = (batch.filter as unknown as BulkFilter).statuses;
    const rate = this.config.replayRatePerSecond;
    const window = rate * 5;
    await this.replays.markBatch(batchId, "running");
    this.logger.log({ msg: "replay batch started", batchId });
    const started = Date.now();
    let queued = 0;
    while (!this.closing) {
      // The allowance grows with time (rate × seconds since this run started), so rounding never speeds it up.
      const allowance = Math.floor((rate * (Date.now() - started)) / 1000) + 1 - queued;
      const room = Math.min(allowance, window - (await this.replays.inFlight(batchId)));
      if (room > 0) {
        const jobs = await this.replays.step(batchId, statuses, room);
        await this.queue.enqueue(jobs);
        queued += jobs.length;
        if ((await this.replays.pendingCount(batchId)) === 0) {
          await this.replays.markBatch(batchId, "done");
          this.logger.log({ msg: "replay batch queued", batchId, queued });
          return;
        }
      }
      await sleep(TICK_MS);
    }
    // Shutting down: the batch stays `running` and this BullMQ job ends; the dispatcher enqueues the
    // batch again and a worker resumes it where it stopped (its progress is in Postgres).
    this.logger.log({ msg: "replay batch paused by shutdown", batchId, queued });
  }
}
