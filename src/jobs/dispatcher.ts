import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from "@nestjs/common";
import { Periodic } from "../common/periodic.js";
import type { AppConfig } from "../config/config.js";
import { APP_CONFIG } from "../config/config.module.js";
import { Metrics } from "../observability/metrics.js";
import { JobQueue } from "./job-queue.js";
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
 * Enqueues job rows that are due but may not be in BullMQ (a crash between commit and enqueue, a
 * Redis outage at ingest, jobs moved back to queued, waiting jobs whose wait is over), held jobs
 * whose connection is active again, jobs whose dependency succeeded without releasing them, and
 * ends waits longer than JOB_MAX_WAIT_SECONDS. Deterministic
 * job ids make one that is already in BullMQ a no-op, so any number of worker replicas can run this
 * at once.
 */
@Injectable()
export class Dispatcher implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger("dispatcher");
  private readonly ticks = new Periodic(() => this.tick());

  constructor(
    private readonly state: JobStateMachine,
    private readonly queue: JobQueue,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly metrics: Metrics,
  ) {}

  onApplicationBootstrap(): void {
    this.ticks.start(this.config.dispatcherIntervalMs);
  }

  onModuleDestroy(): Promise<void> {
    return this.ticks.stop();
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
