import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from "@nestjs/common";
import { Queue, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { WORKER_REDIS } from "../redis/worker-redis.module.js";
import type { AppConfig } from "../config/config.js";
import { APP_CONFIG } from "../config/config.module.js";
import { Metrics } from "../observability/metrics.js";
import { RetentionRepository } from "./retention.repository.js";

const QUEUE = "retention";
const BATCH = 1_000;
const DAY_MS = 86_400_000;
const SCHEDULE_CHECK_MS = 60_000;

/**
 * Retention as a scheduled BullMQ job: every RETENTION_INTERVAL_MINUTES one run purges raw payloads
 * older than PAYLOAD_RETENTION_DAYS and receipts older than RECEIPT_RETENTION_DAYS, in batches of
 * 1,000 until none is left. The schedule is upserted under a fixed id, so any number of workers
 * keep one schedule, and one worker runs each occurrence.
 */
@Injectable()
export class RetentionWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger("retention");
  private queue: Queue | undefined;
  private worker: Worker | undefined;
  private closing = false;
  private scheduler: NodeJS.Timeout | undefined;
  private scheduling: Promise<unknown> | undefined;

  constructor(
    private readonly retention: RetentionRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WORKER_REDIS) private readonly connection: Redis,
    private readonly metrics: Metrics,
  ) {}

  onApplicationBootstrap(): void {
    const options = { connection: this.connection, prefix: this.config.redisPrefix };
    this.queue = new Queue(QUEUE, options);
    this.worker = new Worker(QUEUE, () => this.run(), { ...options, concurrency: 1 });
    this.worker.on("error", (error) =>
      this.logger.warn({ msg: "retention worker error", error: error.message }),
    );
    // The schedule lives in Redis, which may lose it (a restart without persistence, a failover):
    // it is upserted again every minute (idempotent, under a fixed id), never awaited at boot.
    this.schedule();
    this.scheduler = setInterval(() => this.schedule(), SCHEDULE_CHECK_MS);
  }

  private schedule(): void {
    this.scheduling ??= this.queue!.upsertJobScheduler(
      "retention",
      { every: this.config.retentionIntervalMinutes * 60_000 }, // the first run is at once
      { name: QUEUE, opts: { removeOnComplete: true, removeOnFail: true } },
    )
      .catch((error: Error) => this.logger.warn({ msg: "retention not scheduled yet", error: error.message }))
      .finally(() => (this.scheduling = undefined));
  }

  async onModuleDestroy(): Promise<void> {
    this.closing = true;
    clearInterval(this.scheduler);
    await this.worker?.close();
    await this.queue?.close();
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
