import { CONFIG, type JobsConfig } from "../config/sections.js";
import { setTimeout as sleep } from "node:timers/promises";
import { Inject, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from "@nestjs/common";
import { OnWorkerEvent, Processor, WorkerHost } from "@nestjs/bullmq";
import type { Job } from "bullmq";
import { JobQueue } from "../jobs/job-queue.js";
import { JobStateMachine } from "../jobs/state/job-state-machine.js";
import { Metrics } from "../observability/metrics.js";
import type { BulkFilter } from "./replay.repository.js";
import { ReplayRepository } from "./replay.repository.js";
import { REPLAY_QUEUE, type ReplayBatchPayload, ReplayQueue } from "./replay-queue.js";

const TICK_MS = 250;

/**
 * Runs bulk replays in the worker, paced so a replay cannot flood destinations: at most
 * REPLAY_RATE_PER_SECOND jobs a second are re-queued per batch, and no more while five seconds' worth
 * of them are still on their way. Progress lives in Postgres (each batch item is pending, queued or
 * skipped), so a batch whose worker died resumes where it stopped on another worker: every
 * DISPATCHER_INTERVAL_MS, batches not fully queued are handed to BullMQ again (a no-op for one
 * already there: its job id is the batch's).
 * The BullMQ worker (two batches at once) is started and stopped by the queues module.
 */
@Processor(REPLAY_QUEUE, { concurrency: 2 })
export class ReplayBatchWorker extends WorkerHost implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger("replay");
  private closing = false;
  private timer: NodeJS.Timeout | undefined;
  private recovering: Promise<unknown> | undefined;

  constructor(
    private readonly replays: ReplayRepository,
    private readonly state: JobStateMachine,
    private readonly queue: JobQueue,
    private readonly batches: ReplayQueue,
    @Inject(CONFIG.jobs) private readonly config: JobsConfig,
    private readonly metrics: Metrics,
  ) {
    super();
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => {
      this.recovering ??= this.recover().finally(() => (this.recovering = undefined));
    }, this.config.dispatcherIntervalMs);
  }

  async onModuleDestroy(): Promise<void> {
    clearInterval(this.timer);
    await this.recovering;
  }

  /** Hands bulk replays not fully queued (their BullMQ job lost, or paused by a shutdown) to BullMQ again. */
  async recover(): Promise<void> {
    try {
      for (const batchId of await this.replays.unfinishedBatches(this.config.dispatcherIntervalMs)) {
        await this.batches.enqueue(batchId);
        this.metrics.dispatched.inc({ reason: "replay" });
      }
    } catch (error) {
      this.logger.warn({
        msg: "replay recovery failed; the next pass retries",
        error: error instanceof Error ? error.message : String(error),
      });
    }
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
        const jobs = await this.state.replayBatchStep(batchId, statuses, room);
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
    // Shutting down: the batch stays `running` and this BullMQ job ends; recover() enqueues the
    // batch again and a worker resumes it where it stopped (its progress is in Postgres).
    this.logger.log({ msg: "replay batch paused by shutdown", batchId, queued });
  }
}
