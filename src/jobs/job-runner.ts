import { CONFIG, type JobsConfig } from "../config/sections.js";
import { Inject, Injectable, Logger, type OnModuleDestroy } from "@nestjs/common";
import { UnrecoverableError } from "bullmq";
import { classify, CredentialError, WaitRequired } from "../common/outbound/errors.js";
import { type ConnectionStatus, type JobGate, STATES } from "../connections/lifecycle/connection-states.js";
import { CONNECTION_CREDENTIALS, type ConnectionCredentials } from "./connection-credentials.js";
import { backoffDelay } from "./backoff.js";
import { Metrics } from "../observability/metrics.js";
import { type EnqueueableJob, JobQueue } from "./job-queue.js";
import {
  type AnyJobContext,
  CONTEXT_COLUMNS,
  type ContextRow,
  type JobConnection,
  JobContextLoader,
} from "./job-context.js";
import { dependentsOf, type Operation } from "./operations.js";
import type { Processor } from "./processor.js";
import type { Release } from "../common/outbound/destination-limits.js";
import { type HeldSlots, ReleasedRuns } from "./released-runs.js";
import {
  ABANDONED_AFTER_MS,
  type ClaimedJob,
  JobStateMachine,
  type ReleasedJob,
} from "./state/job-state-machine.js";
import { type JobStatus, TRANSITIONS } from "./state/job-states.js";

/** A run says it is alive three times per abandonment period. */
const HEARTBEAT_MS = ABANDONED_AFTER_MS / 3;

/** An attempt failed and will be retried after `delayMs` (read by the workers' backoff strategy). */
export class RetryScheduled extends Error {
  constructor(
    readonly code: string,
    readonly delayMs: number,
  ) {
    super(code);
  }
}

/**
 * Runs one attempt of one job: takes the job row, loads its receipt and connection, runs the
 * operation's processor, and records the attempt and the job's next status in Postgres (through
 * the job state machine) before telling BullMQ. Failures are classified: retryable ones are retried with backoff until the
 * attempts run out (`dead`), permanent ones go straight to `dead`, credential ones block the job and
 * the connection. Nothing is deleted.
 */
@Injectable()
export class JobRunner implements OnModuleDestroy {
  private readonly logger = new Logger("jobs");
  /** Each operation's processor (registered by its BullMQ worker): released jobs run here at once. */
  private readonly processors = new Map<Operation, Processor<AnyJobContext>>();
  private readonly releasedRuns: ReleasedRuns;

  constructor(
    private readonly state: JobStateMachine,
    private readonly contexts: JobContextLoader,
    private readonly queue: JobQueue,
    @Inject(CONFIG.jobs) private readonly config: JobsConfig,
    private readonly metrics: Metrics,
    @Inject(CONNECTION_CREDENTIALS) private readonly tokens: ConnectionCredentials,
  ) {
    this.releasedRuns = new ReleasedRuns(config.releasedRunWaitMs, (operation) =>
      metrics.releasedRunsNoSlot.inc({ operation }),
    );
  }

  /** Counts a recorded attempt (or park) by operation and the status it left the job in. */
  private observe(job: ClaimedJob, status: string): void {
    this.metrics.jobs.inc({ operation: job.operation, status });
    this.metrics.jobSeconds.observe(
      { operation: job.operation, status },
      (Date.now() - job.startedAt.getTime()) / 1000,
    );
  }

  /**
   * Shutdown, while the BullMQ workers close beside it (OperationWorker): released jobs go to BullMQ
   * from now on, and the ones running finish.
   */
  onModuleDestroy(): Promise<void> {
    return this.releasedRuns.close();
  }

  /** Makes `processor` the one released jobs of its operation run with in this process. */
  register(processor: Processor<AnyJobContext>): void {
    this.processors.set(processor.operation, processor);
  }

  async run(processor: Processor<AnyJobContext>, jobId: string): Promise<void> {
    await this.claimAndRun(processor, jobId);
  }

  /**
   * Runs committed jobs (the job outbox's, heard by this worker's dispatcher at their commit) in this
   * process, each in a slot of its operation (ReleasedRuns), with no round trip through BullMQ; claim
   * decides, as for any run. Alone, this worker takes each operation's jobs in their order as its
   * slots free (runs end within milliseconds; the dispatcher hands over nothing else meanwhile, so
   * an overload waits as rows, where the poll finds what waited too long); with other workers of
   * the operation, a job it has no slot free for now goes to BullMQ, where they take it. Answers the
   * jobs it has no slot or processor for, or whose queue an operator paused: the dispatcher hands
   * those to BullMQ.
   */
  async runHere(jobs: readonly EnqueueableJob[]): Promise<EnqueueableJob[]> {
    const elsewhere: EnqueueableJob[] = [];
    const operations = new Set(jobs.map((job) => job.operation));
    // One operation's jobs in order; an operation whose slots are taken does not hold the others'.
    await Promise.all(
      [...operations].map(async (operation) => {
        for (const job of jobs.filter((candidate) => candidate.operation === operation)) {
          const slot = await this.committedSlot(operation);
          if (!slot) elsewhere.push(job);
          else this.startHere([job], slot, { jobId: job.id, operation });
        }
      }),
    );
    return elsewhere;
  }

  /** A slot for a committed job of `operation` to run here (runHere), or undefined. */
  private async committedSlot(operation: Operation): Promise<HeldSlots | undefined> {
    if (!this.processors.has(operation) || (await this.queue.paused(operation))) return undefined;
    return this.releasedRuns.take([operation], { wait: !(await this.queue.shared(operation)) });
  }

  /** Claims the job and runs its attempt; answers when a quota wait it recorded ends (see attempt). */
  private async claimAndRun(processor: Processor<AnyJobContext>, jobId: string): Promise<Date | undefined> {
    const claimed = await this.state.claim<ContextRow>(jobId, CONTEXT_COLUMNS);
    if (!claimed) {
      // Running elsewhere, or left `running` by a run that could not record its end (a crashed
      // worker, a database outage): BullMQ tries again once that run counts as abandoned.
      const waitMs = await this.state.untilAbandoned(jobId);
      if (waitMs !== undefined) throw new RetryScheduled("job_running", waitMs + 1_000);
      return; // finished, waiting, held, blocked or cancelled: nothing to do
    }
    return this.runClaimed(processor, claimed.job, claimed.context);
  }

  /** Runs the attempt of a job claimed for this process, with `row` its receipt and connection. */
  private async runClaimed(
    processor: Processor<AnyJobContext>,
    job: ClaimedJob,
    row: ContextRow,
  ): Promise<Date | undefined> {
    // A long run must not look abandoned: it says it is alive every HEARTBEAT_MS.
    const heartbeat = setInterval(() => void this.state.heartbeat(job).catch(() => undefined), HEARTBEAT_MS);
    try {
      return await this.attempt(processor, job, row);
    } finally {
      clearInterval(heartbeat);
    }
  }

  /**
   * One attempt, recorded. Answers when the job's wait ends if it now waits for a quota (a
   * provider's budget, a Retry-After, a destination's full slots) or a delay (a first reply's
   * `delaySeconds`): a time nothing ends sooner, so a
   * run with no BullMQ job behind it hands the job to BullMQ for then (runReleased). A circuit's wait
   * is left to the dispatcher: the circuit's closing ends it early.
   */
  private async attempt(
    processor: Processor<AnyJobContext>,
    job: ClaimedJob,
    row: ContextRow,
  ): Promise<Date | undefined> {
    const startedAt = job.startedAt;
    const log = {
      jobId: job.id,
      jobKey: job.jobKey,
      operation: job.operation,
      tenantId: job.tenantId,
      attempt: job.attempts,
    };
    // Counted and logged only when the database applied the transition (a refused one is reported
    // by the state machine: this run was taken over as abandoned, and its outcome is not the job's).
    const recorded = (applied: boolean, status: JobStatus, line?: () => void): undefined => {
      if (!applied) return;
      this.observe(job, status);
      line?.();
    };
    let record: boolean | undefined; // set once the run succeeded
    try {
      const context = this.contexts.from(job, row);
      const skip = context.connection && skipFor(processor, context, context.connection.status);
      if (skip) return recorded(await this.state.skip(job, skip), TRANSITIONS[skip].to);
      if (job.dependencyStatus !== null && job.dependencyStatus !== "succeeded") {
        // Runs after another job of its receipt (a CRM delivery after the lead-upsert): that job's
        // success releases it; JOB_MAX_WAIT_SECONDS bounds the wait.
        const until = new Date(Date.now() + this.config.jobMaxWaitSeconds * 1000);
        const { waiting, satisfied } = await this.state.waitForDependency(job, until);
        if (!satisfied) return recorded(waiting, "waiting");
      }
      await this.runWithToken(processor, context);
      record = processor.recordsSuccess?.(context) === true;
    } catch (error) {
      if (error instanceof WaitRequired) {
        // Not a failure: the job runs again once the wait is over (the dispatcher enqueues it).
        const waiting = await this.state.wait(job, error.reason, error.retryAt);
        recorded(waiting, "waiting", () =>
          this.logger.log({ msg: "job waiting", ...log, waitingFor: error.reason, until: error.retryAt }),
        );
        return waiting && error.reason !== "circuit" ? error.retryAt : undefined;
      }
      const failure = classify(error);
      const outcome = { ...log, errorCode: failure.code, durationMs: Date.now() - startedAt.getTime() };
      if (failure.kind === "credential") {
        if (job.connectionId) await this.tokens.refused({ tenantId: job.tenantId, id: job.connectionId });
        recorded(
          await this.state.finish(job, "block", { outcome: "credential", errorCode: failure.code }),
          "blocked",
          () =>
            this.logger.warn({
              msg: "job blocked: provider refused the connection's credentials",
              ...outcome,
            }),
        );
        throw new UnrecoverableError(failure.code);
      }
      if (failure.kind === "permanent" || job.attempts >= job.maxAttempts) {
        recorded(
          await this.state.finish(job, "die", { outcome: failure.kind, errorCode: failure.code }),
          "dead",
          () =>
            this.logger.warn({
              msg: "job dead",
              ...outcome,
              reason: failure.kind === "permanent" ? "permanent" : "attempts exhausted",
            }),
        );
        throw new UnrecoverableError(failure.code);
      }
      const delayMs = backoffDelay(job.attempts, this.config.jobBackoffBaseMs, failure.retryAfterMs);
      const retrying = await this.state.finish(job, "retry", {
        outcome: "retryable",
        errorCode: failure.code,
        nextAttemptAt: new Date(Date.now() + delayMs),
      });
      recorded(retrying, "retrying", () => this.logger.log({ msg: "job will retry", ...outcome, delayMs }));
      throw new RetryScheduled(failure.code, delayMs);
    }
    // The jobs that wait for this one are released and claimed by the same statement when this
    // process runs them (a CRM delivery after its lead-upsert) in slots of its own; else they go to BullMQ.
    const dependents = dependentsOf(job.operation);
    const slots = dependents.every((dependent) => this.processors.has(dependent))
      ? await this.releasedRuns.take(dependents)
      : undefined;
    const released = await this.state
      .succeed(job, { claimReleased: slots !== undefined, record: record === true })
      .catch((error: unknown) => {
        slots?.();
        throw error;
      });
    recorded(released !== undefined, "succeeded", () =>
      this.logger.debug({ msg: "job succeeded", ...log, durationMs: Date.now() - startedAt.getTime() }),
    );
    if (!released?.length) return void slots?.();
    if (!slots) return void (await this.queue.enqueueSoon(released));
    // A slot per dependent operation was taken before the statement said which it released.
    slots.giveBack(dependents.filter((dependent) => !released.some((job) => job.operation === dependent)));
    // This job's slot is free now: its dependents run in theirs (ReleasedRuns).
    this.startHere(released, slots, log, row);
  }

  /** Runs `jobs` in the background in `slots` (runReleased), which are given back when they end. */
  private startHere(
    jobs: ReleasedJob[],
    slots: Release,
    log: Record<string, unknown>,
    row?: ContextRow,
  ): void {
    this.releasedRuns.start(
      () => this.runReleased(jobs, row),
      slots,
      (error) =>
        this.logger.warn({
          msg: "could not run jobs in this process; the dispatcher runs them",
          ...log,
          error: error instanceof Error ? error.message : String(error),
        }),
    );
  }

  /**
   * Runs released or committed jobs in this process at once, in the slots ReleasedRuns gave, without a round
   * trip through BullMQ (a CRM delivery after its lead-upsert, runHere's): one claimed by the release itself
   * runs with its dependency's receipt (`row`: the same receipt, read when the dependency was
   * claimed) and its connection as the release read it (a pause, a new CRM URL or secret during the
   * dependency's run applies); the others are claimed here first, and claim decides, as for any
   * run. Such a run has no BullMQ job behind it:
   * a retry it schedules is handed to BullMQ with its delay, and so is a quota wait (for its end);
   * a run that failed otherwise (the database or Redis failing under it) is handed to BullMQ, which
   * tries again as for any run.
   * Should this process die first, the dispatcher enqueues what it left: queued jobs when due,
   * running ones once they stopped being renewed (STALE_RUNNING_MS).
   */
  private async runReleased(jobs: ReleasedJob[], row?: ContextRow): Promise<void> {
    const handOver: EnqueueableJob[] = [];
    await Promise.all(
      jobs.map(async ({ claimed, connection, ...job }) => {
        const processor = this.processors.get(job.operation);
        if (!processor) return void handOver.push(job);
        try {
          const waitEnds = await (claimed && row
            ? this.runClaimed(processor, claimed, { ...row, ...(connection as Partial<ContextRow>) })
            : this.claimAndRun(processor, job.id));
          // A second late: the claim compares the wait's end with the database's clock.
          if (waitEnds)
            return this.queue.enqueue([job], Math.max(0, waitEnds.getTime() - Date.now()) + 1_000);
        } catch (error) {
          if (error instanceof RetryScheduled) return this.queue.enqueue([job], error.delayMs);
          // Dead or blocked, recorded with its attempt: nothing left to run.
          if (error instanceof UnrecoverableError) return;
          handOver.push(job);
        }
      }),
    );
    if (handOver.length > 0) await this.queue.enqueueSoon(handOver);
  }

  /**
   * Runs the processor with the connection's current provider token (refreshed first when due:
   * ConnectionCredentials). A 401 gets one retry, with a token other than the one refused: refreshed now,
   * or by another job meanwhile.
   */
  private async runWithToken(processor: Processor<AnyJobContext>, context: AnyJobContext): Promise<void> {
    if (!context.connection || !processor.needsCredentials(context)) return processor.run(context);
    const token = await this.tokens.current(context.connection);
    try {
      await processor.run(withToken(context, token));
    } catch (error) {
      if (!(error instanceof CredentialError && error.code === "http_401") || token === undefined)
        throw error;
      const next = await this.tokens.afterUnauthorized(context.connection, token);
      if (next === undefined) throw error;
      await processor.run(withToken(context, next));
    }
  }
}

function withToken<C extends AnyJobContext>(context: C, accessToken: string | undefined): C {
  if (accessToken === undefined || !context.connection) return context;
  // The connection's other secrets stay lazy getters (decrypted only if the processor reads them).
  const connection = Object.create(context.connection, {
    accessToken: { value: accessToken, enumerable: true },
  }) as JobConnection;
  return { ...context, connection };
}

/**
 * The transition a job takes instead of running, by its connection's status: none while active; a
 * credential problem stops only work that calls the provider with those credentials, and a disabled
 * connection's job is cancelled unless it is the disconnect's clean-up.
 */
function skipFor(
  processor: Processor<AnyJobContext>,
  context: AnyJobContext,
  status: ConnectionStatus,
): Skip | undefined {
  if (status === "credential_error" && !processor.needsCredentials(context)) return undefined;
  if (status === "disabled" && processor.runsWhileDisabled?.(context)) return undefined;
  return SKIP[status];
}

type Skip = "hold" | "park" | "cancelRun";

/** The job transition of each gate a connection's status sets (STATES[status].jobs). */
const GATE_TRANSITION: Record<JobGate, Skip | undefined> = {
  run: undefined,
  hold: "hold",
  park: "park",
  cancel: "cancelRun",
};

const SKIP = Object.fromEntries(
  Object.entries(STATES).map(([status, state]) => [status, GATE_TRANSITION[state.jobs]]),
) as Record<ConnectionStatus, Skip | undefined>;
