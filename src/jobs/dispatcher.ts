import { CONFIG, type DatabaseConfig, type JobsConfig } from "../config/sections.js";
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from "@nestjs/common";
import { NaturalBatcher } from "../common/natural-batcher.js";
import { Periodic } from "../common/periodic.js";
import { Metrics } from "../observability/metrics.js";
import { JobOutbox } from "./job-outbox.js";
import { JobQueue } from "./job-queue.js";
import { JobRunner } from "./job-runner.js";
import { OutboxListener } from "./outbox-listener.js";
import { ABANDONED_AFTER_MS, JobStateMachine } from "./state/job-state-machine.js";

const BATCH = 500;
/**
 * A running job untouched this long lost its worker (a live run renews it every ABANDONED_AFTER_MS / 3),
 * and maybe its BullMQ job (Redis lost it, or it ran in-process after its dependency: JobRunner.runReleased).
 */
const STALE_RUNNING_MS = ABANDONED_AFTER_MS + 15_000;
/** A dependency's success releases its dependents at once; the sweep only takes what that missed. */
const DEPENDENCY_GRACE_MS = 30_000;

/**
 * Runs jobs created in a transaction (the job outbox: ingest's jobs, an alert's notifications), or hands
 * them to BullMQ, as soon as that transaction commits: it LISTENs for them (OutboxListener). And it polls: enqueues job
 * rows that are due but may not be in BullMQ (a notification no one heard, a crash between commit
 * and hand-over, a Redis outage, jobs moved back to queued, waiting jobs whose wait is over), held jobs
 * whose connection is active again, jobs whose dependency succeeded without releasing them, and
 * ends waits longer than JOB_MAX_WAIT_SECONDS. Deterministic
 * job ids make one that is already in BullMQ a no-op, so any number of worker replicas can run this
 * at once.
 */
@Injectable()
export class Dispatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger("dispatcher");
  private readonly ticks = new Periodic(() => this.tick());
  /** Ids heard while one hand-over is in flight go together in the next. */
  private readonly committed = new NaturalBatcher<string[], void>(
    async (groups) => {
      await this.dispatchCommitted(groups.flat());
      return groups.map(() => undefined);
    },
    { maxBatch: 50 },
  );
  private readonly listener: OutboxListener;

  constructor(
    private readonly state: JobStateMachine,
    private readonly runner: JobRunner,
    private readonly queue: JobQueue,
    private readonly outbox: JobOutbox,
    @Inject(CONFIG.jobs) private readonly config: JobsConfig,
    @Inject(CONFIG.database) database: DatabaseConfig,
    private readonly metrics: Metrics,
  ) {
    this.listener = new OutboxListener(database.databaseUrl, (ids) => {
      if (ids.length > 0) void this.committed.submit(ids);
    });
  }

  /** The worker counts as started once its listener listens or follows (the job outbox is heard). */
  async onApplicationBootstrap(): Promise<void> {
    await this.listener.start();
    this.ticks.start(this.config.dispatcherIntervalMs);
  }

  async onModuleDestroy(): Promise<void> {
    await this.listener.stop();
    await this.ticks.stop();
  }

  /**
   * Jobs of the outbox just committed: those still queued run in this process (JobRunner.runHere: no
   * round trip through BullMQ), the others go to BullMQ now (the poll retries a failure). While this
   * hand-over waits for slots, the ids heard meanwhile wait for the next.
   */
  private async dispatchCommitted(ids: string[]): Promise<void> {
    try {
      const queued = await this.outbox.queued(ids);
      const jobs = this.config.dispatcherRunsJobs ? await this.runner.runHere(queued) : queued;
      this.metrics.ranHere.inc(queued.length - jobs.length);
      if (jobs.length === 0) return;
      await this.queue.enqueue(jobs);
      this.metrics.dispatched.inc({ reason: "committed" }, jobs.length);
    } catch (error) {
      this.logger.warn({
        msg: "dispatch of committed outbox jobs failed; the poll takes them",
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  async tick(): Promise<void> {
    try {
      const released = await this.state.releaseParked(this.config.dispatcherIntervalMs, BATCH);
      if (released.length > 0) {
        await this.queue.enqueue(released);
        this.metrics.dispatched.inc({ reason: "released" }, released.length);
        this.logger.log({
          msg: "released held and blocked jobs of active connections",
          jobs: released.length,
        });
      }
      const satisfied = await this.state.releaseSatisfiedWaits(DEPENDENCY_GRACE_MS, BATCH);
      if (satisfied.length > 0) {
        await this.queue.enqueue(satisfied);
        this.metrics.dispatched.inc({ reason: "released" }, satisfied.length);
        this.logger.log({ msg: "released jobs whose dependency had succeeded", jobs: satisfied.length });
      }
      const expired = await this.state.expireWaits(this.config.jobMaxWaitSeconds, BATCH);
      if (expired > 0) this.logger.warn({ msg: "jobs waited too long: dead (wait_expired)", jobs: expired });
      const due = await this.state.due(this.config.dispatcherIntervalMs, STALE_RUNNING_MS, BATCH);
      if (due.length > 0) {
        await this.queue.enqueue(due);
        this.metrics.dispatched.inc({ reason: "due" }, due.length);
        this.logger.log({ msg: "re-enqueued due jobs", jobs: due.length });
      }
    } catch (error) {
      this.logger.warn({
        msg: "dispatch failed; next tick retries",
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }
}
