import { Inject, Injectable, Logger, type OnModuleDestroy } from "@nestjs/common";
import { type JobsOptions, Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { AppConfig } from "../config/config.js";
import { APP_CONFIG } from "../config/config.module.js";
import { withTimeout } from "../common/with-timeout.js";
import { Metrics } from "../observability/metrics.js";
import { REDIS } from "../redis/redis.module.js";
import { bullJobId, type JobPayload, type Operation, OPERATION_SETTINGS, OPERATIONS } from "./operations.js";

const ENQUEUE_TIMEOUT_MS = 2_000;

export interface EnqueueableJob {
  id: string;
  jobKey: string;
  operation: Operation;
}

/** The one place BullMQ job options are built: deterministic id, attempts, backoff with jitter, removal. */
export function jobOptions(operation: Operation, key: string): JobsOptions {
  const settings = OPERATION_SETTINGS[operation];
  return {
    jobId: bullJobId(key),
    attempts: settings.attempts,
    // The delay is computed by the job runner (src/jobs/backoff.ts backoffDelay) and read back by the workers.
    backoff: { type: "custom" },
    // Postgres keeps the history, and a job row that is finished refuses to run again, so Redis
    // keeps nothing: the id is free at once for the dispatcher, a resume or a replay.
    removeOnComplete: true,
    removeOnFail: true,
  };
}

/**
 * Producer side of the job queues (one BullMQ queue per operation). Enqueueing is typed: a job's
 * name is its operation and its data the job row id, nothing else.
 */
@Injectable()
export class JobQueue implements OnModuleDestroy {
  private readonly logger = new Logger("job-queue");
  private readonly queues: Record<Operation, Queue<JobPayload>>;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) config: AppConfig,
    private readonly metrics: Metrics,
  ) {
    const queue = (operation: Operation) => {
      const created = new Queue<JobPayload>(operation, { connection: redis, prefix: config.redisPrefix });
      // Connection errors are the shared client's, logged once by RedisModule; enqueue failures below.
      created.on("error", () => undefined);
      return created;
    };
    this.queues = Object.fromEntries(OPERATIONS.map((operation) => [operation, queue(operation)])) as Record<
      Operation,
      Queue<JobPayload>
    >;
  }

  /** Every operation's queue (for the queue dashboard). */
  all(): Queue<JobPayload>[] {
    return Object.values(this.queues);
  }

  /**
   * Hands committed jobs to BullMQ. Never throws: the rows are durable either way, and the
   * dispatcher enqueues whatever did not make it (Redis down, process killed).
   */
  async enqueue(jobs: EnqueueableJob[]): Promise<void> {
    await Promise.all(
      OPERATIONS.map(async (operation) => {
        const group = jobs.filter((job) => job.operation === operation);
        if (group.length === 0) return;
        try {
          // BullMQ waits for a connection that is down; ingest must not (nor pile up promises meanwhile).
          if (this.redis.status !== "ready") throw new Error(`redis is ${this.redis.status}`);
          const bulk = group.map((job) => ({
            name: operation,
            data: { jobId: job.id },
            opts: jobOptions(operation, job.jobKey),
          }));
          await withTimeout(this.queues[operation].addBulk(bulk), ENQUEUE_TIMEOUT_MS, "redis");
        } catch (error) {
          this.metrics.enqueueFailures.inc(group.length);
          this.logger.warn({
            msg: "enqueue failed; the dispatcher will enqueue these jobs",
            operation,
            jobs: group.length,
            error: error instanceof Error ? error.message : String(error),
          });
        }
      }),
    );
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all(Object.values(this.queues).map((queue) => queue.close()));
  }
}
