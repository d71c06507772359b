import { CONFIG, type JobsConfig } from "../config/sections.js";
import {
  Inject,
  type InjectionToken,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
  type Type,
} from "@nestjs/common";
import { Processor as QueueProcessor, WorkerHost } from "@nestjs/bullmq";
import type { Job } from "bullmq";
import { JobRunner, RetryScheduled } from "./job-runner.js";
import { type JobPayload, type Operation, OPERATION_SETTINGS } from "./operations.js";
import type { AnyJobContext } from "./job-context.js";
import type { Processor } from "./processor.js";
import { CrmDeliveryProcessor } from "./processors/crm-delivery.processor.js";
import { InitialResponseProcessor } from "./processors/initial-response.processor.js";
import { ProviderMarkRepliedProcessor } from "./processors/provider-mark-replied.processor.js";
import { LeadUpsertProcessor } from "./processors/lead-upsert.processor.js";

/**
 * BullMQ's retry delay. The runner computed the delay (backoff with jitter, Retry-After) and stored
 * it on the job row. Anything else (the database or Redis failing under the runner) backs off
 * 2 s, 4 s, ... 1 min.
 */
function retryDelay(attemptsMade: number, _type?: string, error?: Error): number {
  return error instanceof RetryScheduled ? error.delayMs : Math.min(1000 * 2 ** attemptsMade, 60_000);
}

/**
 * The processor of an operation that a module of a layer above provides (it needs what the jobs
 * layer may not import: reconciliation writes receipts through ingestion's writer, notifications
 * read alerts and channels). That module provides this token, and the entry point hands it to
 * WorkerJobsModule.forRoot; without it the worker's boot fails (no provider for the token).
 */
export const featureProcessor = (operation: Operation): InjectionToken => `processor:${operation}`;

/** Operations whose worker concurrency an operator sets (OPERATION_SETTINGS holds the default). */
const CONFIGURED_CONCURRENCY: Partial<Record<Operation, (config: JobsConfig) => number>> = {
  reconciliation: (config) => config.reconcileConcurrency,
};

/**
 * The BullMQ worker of one operation's queue, with the operation's concurrency: it hands each job
 * to the runner with the operation's processor. Its construction fails (and with it the boot) when
 * the processor is not the operation's own.
 */
function operationWorker(
  operation: Operation,
  processorType: Type<Processor<AnyJobContext>> | InjectionToken,
): Type<WorkerHost> {
  @QueueProcessor(operation, {
    concurrency: OPERATION_SETTINGS[operation].concurrency,
    settings: { backoffStrategy: retryDelay },
  })
  class OperationWorker extends WorkerHost implements OnApplicationBootstrap, OnModuleDestroy {
    constructor(
      @Inject(JobRunner) private readonly runner: JobRunner,
      @Inject(processorType) private readonly processor: Processor<AnyJobContext>,
      @Inject(CONFIG.jobs) private readonly config: JobsConfig,
    ) {
      super();
      if (processor.operation !== operation)
        throw new Error(`no processor registered for operation(s): ${operation}`);
      runner.register(processor);
    }

    onApplicationBootstrap(): void {
      const concurrency = CONFIGURED_CONCURRENCY[operation];
      if (concurrency) this.worker.concurrency = concurrency(this.config);
    }

    /**
     * Shutdown: stops taking jobs at once, so its active jobs finish while the runner's released
     * runs do (JobRunner.onModuleDestroy, same module), not after them; QueueLifecycle's close of
     * every worker then finds it closed.
     */
    async onModuleDestroy(): Promise<void> {
      await startedWorker(this)?.close();
    }

    process(job: Job<JobPayload>): Promise<void> {
      return this.runner.run(this.processor, job.data.jobId);
    }
  }
  Object.defineProperty(OperationWorker, "name", { value: `OperationWorker(${operation})` });
  return OperationWorker;
}

/** The host's BullMQ worker, unless it was never started (a boot that failed before QueueLifecycle started them). */
function startedWorker(host: WorkerHost): WorkerHost["worker"] | undefined {
  try {
    return host.worker;
  } catch {
    return undefined;
  }
}

/** One worker per operation: an operation without one does not compile. */
export const OPERATION_WORKERS: Record<Operation, Type<WorkerHost>> = {
  "lead-upsert": operationWorker("lead-upsert", LeadUpsertProcessor),
  "initial-response": operationWorker("initial-response", InitialResponseProcessor),
  "crm-delivery": operationWorker("crm-delivery", CrmDeliveryProcessor),
  notification: operationWorker("notification", featureProcessor("notification")),
  "provider-sync": operationWorker("provider-sync", featureProcessor("provider-sync")),
  reconciliation: operationWorker("reconciliation", featureProcessor("reconciliation")),
  "provider-mark-replied": operationWorker("provider-mark-replied", ProviderMarkRepliedProcessor),
};
