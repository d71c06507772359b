import { Injectable, Logger } from "@nestjs/common";
import type { JobsOptions, Queue } from "bullmq";
import { NaturalBatcher } from "../common/natural-batcher.js";
import { withTimeout } from "../common/with-timeout.js";
import { Metrics } from "../observability/metrics.js";
import { Queues } from "../queues/queues.js";
import { bullJobId, type JobPayload, type Operation, OPERATION_SETTINGS, OPERATIONS } from "./operations.js";

const ENQUEUE_TIMEOUT_MS = 2_000;
/** How long a queue's pause state, once read, stands for (JobQueue.paused). */
const PAUSE_READ_MS = 1_000;
/** How long the count of a queue's workers, once read, stands for (JobQueue.shared). */
const WORKERS_READ_MS = 5_000;

/** A job handed to BullMQ: its row id, key and operation (what the state machine's requeues answer). */
export interface EnqueueableJob {
  id: string;
  jobKey: string;
  operation: Operation;
}

/** The one place BullMQ job options are built: deterministic id, attempts, backoff with jitter, removal. */
export function jobOptions(operation: Operation, key: string, delayMs?: number): JobsOptions {
  const settings = OPERATION_SETTINGS[operation];
  return {
    jobId: bullJobId(key),
    ...(delayMs ? { delay: delayMs } : {}),
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
 * Producer side of the job queues (one BullMQ queue per operation, from the queues module).
 * Enqueueing is typed: a job's name is its operation and its data the job row id, nothing else.
 */
@Injectable()
export class JobQueue {
  private readonly logger = new Logger("job-queue");

  /** Jobs handed over while one enqueue is in flight go together in the next (one round trip). */
  private readonly batcher = new NaturalBatcher<EnqueueableJob[], void>(
    async (groups) => {
      await this.enqueue(groups.flat());
      return groups.map(() => undefined);
    },
    { maxBatch: 200 },
  );

  /** Whether an operator paused each operation's queue (the queue dashboard), as last read. */
  private readonly pauses = new QueueFacts(PAUSE_READ_MS, (queue) => queue.isPaused());
  /** Whether more than one worker takes each operation's jobs from BullMQ, as last read. */
  private readonly workers = new QueueFacts(
    WORKERS_READ_MS,
    async (queue) => (await queue.getWorkersCount()) > 1,
  );

  constructor(
    private readonly queues: Queues,
    private readonly metrics: Metrics,
  ) {}

  /** `enqueue`, naturally batched with the other callers of this process (workers releasing jobs). */
  enqueueSoon(jobs: EnqueueableJob[]): Promise<void> {
    return this.batcher.submit(jobs);
  }

  /**
   * Whether an operator paused `operation`'s queue (the queue dashboard), so that the jobs a worker
   * runs outside BullMQ honour the pause too. Read from Redis at most once per PAUSE_READ_MS; while
   * Redis does not answer, the last state read stands (not paused if none was): the job runs here
   * (it needs no Redis), or waits for the dispatcher if paused.
   */
  paused(operation: Operation): Promise<boolean> {
    return this.pauses.get(this.queues, operation);
  }

  /**
   * Whether other workers than this process's take `operation`'s jobs from BullMQ (its queue has
   * more than one: BullMQ counts them by their connection names, CLIENT LIST), so that a job handed
   * to BullMQ may run elsewhere. Read at most once per WORKERS_READ_MS; while Redis does not answer,
   * the last count read stands (alone if none was: a job handed to BullMQ then would wait for Redis).
   */
  shared(operation: Operation): Promise<boolean> {
    return this.workers.get(this.queues, operation);
  }

  /**
   * Hands committed jobs to BullMQ (to run after `delayMs`, when given). Never throws: the rows are
   * durable either way, and the dispatcher enqueues whatever did not make it (Redis down, process killed).
   */
  async enqueue(jobs: EnqueueableJob[], delayMs?: number): Promise<void> {
    await Promise.all(
      OPERATIONS.map(async (operation) => {
        const group = jobs.filter((job) => job.operation === operation);
        if (group.length === 0) return;
        try {
          // BullMQ waits for a connection that is down; ingest must not (nor pile up promises meanwhile).
          this.queues.assertConnected();
          const bulk = group.map((job) => ({
            name: operation,
            data: { jobId: job.id },
            opts: jobOptions(operation, job.jobKey, delayMs),
          }));
          await withTimeout(
            this.queues.get<JobPayload>(operation).addBulk(bulk),
            ENQUEUE_TIMEOUT_MS,
            "redis",
          );
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
}

/**
 * A yes-or-no fact about each operation's queue, read from Redis at most once per `everyMs`: while
 * Redis does not answer, the last value read stands (no, if none was).
 */
class QueueFacts {
  private readonly known = new Map<Operation, { value: boolean; at: number }>();

  constructor(
    private readonly everyMs: number,
    private readonly read: (queue: Queue) => Promise<boolean>,
  ) {}

  async get(queues: Queues, operation: Operation): Promise<boolean> {
    const known = this.known.get(operation);
    if (known && Date.now() - known.at < this.everyMs) return known.value;
    let value = known?.value ?? false;
    try {
      queues.assertConnected();
      value = await withTimeout(this.read(queues.get(operation)), ENQUEUE_TIMEOUT_MS, "redis");
    } catch {
      // Redis is down: the last value stands.
    }
    this.known.set(operation, { value, at: Date.now() });
    return value;
  }
}
