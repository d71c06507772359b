// The schedule of periodic reconciliation: every connection with a provider API is reconciled once
// per RECONCILE_INTERVAL_SECONDS, at an offset of its own within the interval (a hash of its id), so
// 2,000 connections make a steady trickle, not a burst. Each run is a keyed `reconciliation` job
// (connection + tick): any number of worker replicas may sweep, one job per tick is made.
import { CONFIG, type ReconciliationConfig } from "../config/sections.js";
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleDestroy,
} from "@nestjs/common";
import { classify } from "../common/outbound/errors.js";
import { Periodic } from "../common/periodic.js";
import { ConnectionSubstates } from "../connections/connection-substates.js";
import { Transactions } from "../database/transactions.js";
import { JobQueue } from "../jobs/job-queue.js";
import { API_PROVIDERS } from "../providers/capabilities.js";
import { jobKey } from "../jobs/operations.js";
import { JobStateMachine } from "../jobs/state/job-state-machine.js";

/** The sweep looks this often at most (a tenth of the interval when that is shorter). */
const SWEEP_MS = 5_000;

/** The job key of one scheduled run: connection + tick (the tick's number since the epoch). */
export const tickKey = (connectionId: string, tick: number | string) =>
  jobKey("reconciliation", `${connectionId}.tick.${tick}`);

@Injectable()
export class ReconciliationSweep implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger("reconcile-sweep");
  private readonly sweeps = new Periodic(() => this.sweep());

  constructor(
    private readonly transactions: Transactions,
    private readonly substates: ConnectionSubstates,
    private readonly state: JobStateMachine,
    private readonly queue: JobQueue,
    @Inject(CONFIG.reconciliation) private readonly config: ReconciliationConfig,
  ) {}

  onApplicationBootstrap(): void {
    this.sweeps.start(Math.min(SWEEP_MS, (this.config.reconcileIntervalSeconds * 1000) / 10));
  }

  onModuleDestroy(): Promise<void> {
    return this.sweeps.stop();
  }

  /**
   * Makes the jobs of the ticks that came due by `now`: a connection's tick n is due at
   * n × interval + its offset. A connection seen for the first time only gets its current tick
   * noted (its first run comes at its next offset: spread, not all at once after a deploy).
   * Answers how many jobs it made. Platform-wide by nature; each job is its connection's tenant's.
   */
  async sweep(now = new Date()): Promise<number> {
    try {
      const jobs = await this.transactions.run(async (tx) => {
        const due = await this.substates.scheduleReconciliations(
          tx,
          now,
          this.config.reconcileIntervalSeconds,
          API_PROVIDERS,
        );
        return this.state.create(
          due.map((row) => ({
            tenantId: row.tenant_id,
            connectionId: row.id,
            operation: "reconciliation" as const,
            jobKey: tickKey(row.id, row.tick),
          })),
          tx,
        );
      });
      await this.queue.enqueue(jobs);
      return jobs.length;
    } catch (error) {
      this.logger.warn({
        msg: "reconciliation sweep failed; the next one retries",
        errorCode: classify(error).code,
      });
      return 0;
    }
  }
}
