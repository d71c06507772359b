// The follow-up runs of POST /admin/connections/{id}/sync (api.md `/sync` row): a call while the
// connection's run was running made a run that waits for it, with no jobs (SyncRuns). Every second,
// each worker starts the follow-ups whose run ended: it makes their jobs then, under the
// connection's row lock (the lock the route takes, so a call meanwhile still joins the follow-up,
// and a second worker finds it started), so a follow-up reads the provider only after the run it
// follows ended. Platform-wide by nature; each run is its connection's tenant's.
import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from "@nestjs/common";
import { classify } from "../common/outbound/errors.js";
import { Periodic } from "../common/periodic.js";
import { ConnectionStore } from "../connections/connection-store.js";
import { SyncRuns, type WaitingRun } from "../connections/sync-runs.js";
import { PrismaService } from "../database/prisma.service.js";
import { Transactions } from "../database/transactions.js";
import { JobQueue } from "../jobs/job-queue.js";
import { Reconciliation } from "./reconciliation.service.js";

/** How often the sweep looks: a follow-up starts within about this long after its run ended. */
const SWEEP_MS = 1_000;
/** Follow-ups one sweep starts at most; the next takes the rest. */
const BATCH = 100;

@Injectable()
export class SyncRunFollowUps implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger("sync-runs");
  private readonly sweeps = new Periodic(() => this.sweep());

  constructor(
    private readonly prisma: PrismaService,
    private readonly transactions: Transactions,
    private readonly store: ConnectionStore,
    private readonly runs: SyncRuns,
    private readonly reconciliation: Reconciliation,
    private readonly queue: JobQueue,
  ) {}

  onApplicationBootstrap(): void {
    this.sweeps.start(SWEEP_MS);
  }

  onModuleDestroy(): Promise<void> {
    return this.sweeps.stop();
  }

  /** Starts the follow-ups whose run ended; answers how many it started. */
  async sweep(): Promise<number> {
    try {
      let started = 0;
      for (const run of await this.runs.waiting(this.prisma, BATCH)) {
        if (await this.start(run)) started += 1;
      }
      return started;
    } catch (error) {
      this.logger.warn({
        msg: "sync follow-up sweep failed; the next one retries",
        errorCode: classify(error).code,
      });
      return 0;
    }
  }

  /** Makes the run's jobs unless, under the connection's lock, it is no longer waiting to start. */
  private async start(run: WaitingRun): Promise<boolean> {
    const jobs = await this.transactions.run(async (tx) => {
      const connection = await this.store.lock(tx, run.tenantId, run.connectionId);
      if ((await this.runs.waiting(tx, 1, run)).length === 0) return undefined;
      const { jobs, ...ids } = await this.reconciliation.syncRun(tx, connection, run.id);
      await this.runs.started(tx, run, ids);
      return jobs;
    });
    if (!jobs) return false;
    await this.queue.enqueue(jobs); // after commit; the dispatcher covers a failure here
    this.logger.log({
      msg: "sync follow-up started",
      tenantId: run.tenantId,
      connectionId: run.connectionId,
      runId: run.id,
    });
    return true;
  }
}
