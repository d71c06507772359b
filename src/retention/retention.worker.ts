import { CONFIG, type RetentionConfig } from "../config/sections.js";
import { Inject, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from "@nestjs/common";
import { OnWorkerEvent, Processor, WorkerHost } from "@nestjs/bullmq";
import { Metrics } from "../observability/metrics.js";
import type { QueueName } from "../queues/queue-names.js";
import { Queues } from "../queues/queues.js";
import { RetentionRepository } from "./retention.repository.js";

const QUEUE = "retention" satisfies QueueName;
const BATCH = 1_000;
const DAY_MS = 86_400_000;
const SCHEDULE_CHECK_MS = 60_000;

/**
 * Retention as a scheduled BullMQ job: every RETENTION_INTERVAL_MINUTES one run purges raw payloads
 * older than PAYLOAD_RETENTION_DAYS and receipts older than RECEIPT_RETENTION_DAYS, in batches of
 * 1,000 until none is left. The schedule is upserted under a fixed id, so any number of workers
 * keep one schedule, and one worker runs each occurrence (the BullMQ worker, one run at a time, is
 * started and stopped by the queues module).
 */
@Processor(QUEUE, { concurrency: 1 })
export class RetentionWorker extends WorkerHost implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger("retention");
  private closing = false;
  private scheduler: NodeJS.Timeout | undefined;
  private scheduling: Promise<unknown> | undefined;

  constructor(
    private readonly retention: RetentionRepository,
    @Inject(CONFIG.retention) private readonly config: RetentionConfig,
    private readonly queues: Queues,
    private readonly metrics: Metrics,
  ) {
    super();
  }

  async process(): Promise<void> {
    await this.run();
  }

  onApplicationBootstrap(): void {
    // The schedule lives in Redis, which may lose it (a restart without persistence, a failover):
    // it is upserted again every minute (idempotent, under a fixed id), never awaited at boot.
    this.schedule();
    this.scheduler = setInterval(() => this.schedule(), SCHEDULE_CHECK_MS);
  }

  private schedule(): void {
    this.scheduling ??= this.queues
      .get(QUEUE)
      .upsertJobScheduler(
        "retention",
        { every: this.config.retentionIntervalMinutes * 60_000 }, // the first run is at once
        { name: QUEUE, opts: { removeOnComplete: true, removeOnFail: true } },
      )
      .catch((error: Error) => this.logger.warn({ msg: "retention not scheduled yet", error: error.message }))
      .finally(() => (this.scheduling = undefined));
  }

  /** Shutdown began: a pass in progress stops after its current batch. */
  @OnWorkerEvent("closing")
  onClosing(): void {
    this.closing = true;
  }

  onModuleDestroy(): void {
    clearInterval(this.scheduler);
  }

  /** One retention pass; answers what it purged. */
  async run(now = new Date()): Promise<{ payloads: number; receipts: number }> {
    const payloadCutoff = new Date(now.getTime() - this.config.payloadRetentionDays * DAY_MS);
    const receiptCutoff = new Date(now.getTime() - this.config.receiptRetentionDays * DAY_MS);
    const purged = { payloads: 0, receipts: 0 };
    for (let n = BATCH; n === BATCH && !this.closing;) {
      n = await this.retention.purgePayloads(payloadCutoff, BATCH);
      purged.payloads += n;
      this.metrics.retentionPurged.inc({ what: "payloads" }, n);
    }
    for (let more = true; more && !this.closing;) {
      const step = await this.retention.purgeReceipts(receiptCutoff, BATCH);
      purged.receipts += step.deleted;
      this.metrics.retentionPurged.inc({ what: "receipts" }, step.deleted);
      more = step.more;
    }
    this.logger.log({ msg: "retention pass", ...purged, payloadCutoff, receiptCutoff });
    return purged;
  }
}
