import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from "@nestjs/common";
import { type Job, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { WORKER_REDIS } from "../redis/worker-redis.module.js";
import type { AppConfig } from "../config/config.js";
import { APP_CONFIG } from "../config/config.module.js";
import { JobRunner, type ProcessorTable, RetryScheduled } from "./job-runner.js";
import { type JobPayload, OPERATION_SETTINGS, OPERATIONS } from "./operations.js";
import { CrmDeliveryProcessor } from "./processors/crm-delivery.processor.js";
import { InitialResponseProcessor } from "./processors/initial-response.processor.js";
import { LeadUpsertProcessor } from "./processors/lead-upsert.processor.js";

/**
 * The BullMQ workers: one per operation, with the operation's concurrency. Boot fails if an
 * operation has no processor. On shutdown, workers stop taking jobs and wait for active ones.
 */
@Injectable()
export class WorkerHost implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger("worker");
  private readonly processors: ProcessorTable;
  private workers: Worker<JobPayload>[] = [];

  constructor(
    private readonly runner: JobRunner,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WORKER_REDIS) private readonly connection: Redis,
    leadUpsert: LeadUpsertProcessor,
    initialResponse: InitialResponseProcessor,
    crmDelivery: CrmDeliveryProcessor,
  ) {
    this.processors = {
      "lead-upsert": leadUpsert,
      "initial-response": initialResponse,
      "crm-delivery": crmDelivery,
    };
    const missing = OPERATIONS.filter((operation) => this.processors[operation]?.operation !== operation);
    if (missing.length > 0)
      throw new Error(`no processor registered for operation(s): ${missing.join(", ")}`);
  }

  onApplicationBootstrap(): void {
    this.workers = OPERATIONS.map((operation) => {
      const processor = this.processors[operation];
      const worker = new Worker<JobPayload>(
        operation,
        (job: Job<JobPayload>) => this.runner.run(processor, job.data.jobId),
        {
          connection: this.connection,
          prefix: this.config.redisPrefix,
          concurrency: OPERATION_SETTINGS[operation].concurrency,
          settings: {
            // The runner computed the delay (backoff with jitter, Retry-After) and stored it on the job row.
            // Anything else (the database or Redis failing under the runner) backs off 2 s, 4 s, ... 1 min.
            backoffStrategy: (attemptsMade, _type, error) =>
              error instanceof RetryScheduled ? error.delayMs : Math.min(1000 * 2 ** attemptsMade, 60_000),
          },
        },
      );
      worker.on("error", (error) =>
        this.logger.warn({ msg: "worker error", operation, error: error.message }),
      );
      return worker;
    });
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.close()));
  }
}
