import { CONFIG, type RetentionConfig } from "../config/sections.js";
import { Inject, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from "@nestjs/common";
import { OnWorkerEvent, Processor, WorkerHost } from "@nestjs/bullmq";
import { Metrics } from "../observability/metrics.js";
import type { QueueName } from "../queues/queue-names.js";
import { Queues } from "../queues/queues.js";
import { PARTITIONED, PARTITIONED_TABLES, type PartitionedTable } from "./partitioned-tables.js";
import { PartitionsRepository } from "./partitions.repository.js";
import { RetentionRepository } from "./retention.repository.js";

const QUEUE = "retention" satisfies QueueName;
const BATCH = 1_000;
const DAY_MS = 86_400_000;
const SCHEDULE_CHECK_MS = 60_000;

/** What a pass counts per table (the metric's `what`). */
const WHAT: Record<PartitionedTable, "payloads" | "attempts" | "messages" | "audit"> = {
  receipt_payloads: "payloads",
  job_attempts: "attempts",
  lead_messages: "messages",
  audit_entries: "audit",
};

export interface RetentionPass {
  payloads: number;
  attempts: number;
  messages: number;
  audit: number;
  receipts: number;
  /** Finished jobs without a receipt (a connection's or an alert's), deleted after RECEIPT_RETENTION_DAYS. */
  jobs: number;
  /** Whole months dropped (their rows are not counted one by one). */
  partitions: number;
}

/**
 * Retention as a scheduled BullMQ job: every RETENTION_INTERVAL_MINUTES one run keeps the month
 * partitions ready ahead (docs/operations.md "Partitioned history"), deletes receipts older than
 * RECEIPT_RETENTION_DAYS with their jobs (row by row, in batches of 1,000) and the finished jobs
 * without a receipt completed before it, drops each partitioned
 * table's months older than its window (payloads PAYLOAD_RETENTION_DAYS, attempts with the receipts,
 * messages MESSAGE_RETENTION_DAYS, audit AUDIT_RETENTION_DAYS) keeping their survivors, and purges
 * the DEFAULT partitions' expired rows in batches. The schedule is upserted under a fixed id, so any number of workers
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
    private readonly partitions: PartitionsRepository,
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

  /**
   * One retention pass; answers what it purged. Each part (a table's maintenance ahead, the receipts
   * with the jobs, a table's drops and DEFAULT purge) fails on its own: logged, counted in
   * leadgate_retention_failures_total{table}, and the pass goes on with the next; it then throws
   * the first failure, so the run reports failed.
   */
  async run(now = new Date()): Promise<RetentionPass> {
    const cutoff = (days: number) => new Date(now.getTime() - days * DAY_MS);
    const receiptCutoff = cutoff(this.config.receiptRetentionDays);
    const purged: RetentionPass = {
      payloads: 0,
      attempts: 0,
      messages: 0,
      audit: 0,
      receipts: 0,
      jobs: 0,
      partitions: 0,
    };
    const failures: unknown[] = [];
    const isolated = async (table: PartitionedTable | "receipts", work: () => Promise<unknown>) => {
      try {
        await work();
      } catch (error) {
        failures.push(error);
        this.metrics.retentionFailures.inc({ table });
        // The SQLSTATE and message only: a driver error's detail may hold row values.
        const { code, message } = error as { code?: string; message?: string };
        this.logger.warn({ msg: "retention failed", table, code, error: message });
      }
    };
    for (const table of PARTITIONED_TABLES)
      await isolated(table, () => this.partitions.createAhead(table, now));
    // Receipts (with their jobs) and finished jobs without a receipt first: their attempts then go
    // with the month, not as survivors.
    await isolated("receipts", async () => {
      for (let more = true; more && !this.closing;) {
        const step = await this.retention.purgeReceipts(receiptCutoff, BATCH);
        purged.receipts += step.deleted;
        this.metrics.retentionPurged.inc({ what: "receipts" }, step.deleted);
        more = step.more;
      }
      for (let n = BATCH; n === BATCH && !this.closing;) {
        n = await this.retention.purgeUnownedJobs(receiptCutoff, BATCH);
        purged.jobs += n;
        this.metrics.retentionPurged.inc({ what: "jobs" }, n);
      }
    });
    for (const table of PARTITIONED_TABLES) {
      await isolated(table, () =>
        this.retainTable(table, cutoff(PARTITIONED[table].days(this.config)), purged),
      );
    }
    this.logger.log({ msg: "retention pass", ...purged, receiptCutoff, failed: failures.length });
    if (failures.length > 0) throw failures[0];
    return purged;
  }

  /** Drops the table's months older than `tableCutoff` (keeping their survivors), then purges its DEFAULT. */
  private async retainTable(
    table: PartitionedTable,
    tableCutoff: Date,
    purged: RetentionPass,
  ): Promise<void> {
    for (const month of await this.partitions.months(table)) {
      if (this.closing || month.end > tableCutoff) break;
      const survivors = await this.partitions.dropMonth(table, month, tableCutoff);
      purged.partitions += 1;
      this.metrics.retentionPurged.inc({ what: "partitions" });
      this.logger.log({ msg: "partition dropped", table, month: month.start, survivors });
    }
    for (let n = BATCH; n === BATCH && !this.closing;) {
      n = await this.retention.purgeDefault(table, tableCutoff, BATCH);
      purged[WHAT[table]] += n;
      this.metrics.retentionPurged.inc({ what: WHAT[table] }, n);
    }
  }
}
