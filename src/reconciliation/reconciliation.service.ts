// The API side of reconciliation: start a connection's run now (a run of
// POST /admin/connections/{id}/sync, or one asked for by hand). Admin routes import this folder,
// never the reverse (so it names no admin module).
import { randomUUID } from "node:crypto";
import { Injectable } from "@nestjs/common";
import { AppError } from "../common/app-error.js";
import { ProviderSyncJobs } from "../connections/provider-sync.js";
import type { RunJobs } from "../connections/sync-runs.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Tx } from "../database/transactions.js";
import { type EnqueueableJob, JobQueue } from "../jobs/job-queue.js";
import { jobKey } from "../jobs/operations.js";
import { JobStateMachine } from "../jobs/state/job-state-machine.js";

/** The job key of the reconciliation of run `runId` (a /sync run, or a run started by hand). */
export const runKey = (connectionId: string, runId: string) =>
  jobKey("reconciliation", `${connectionId}.run.${runId}`);

@Injectable()
export class Reconciliation {
  constructor(
    private readonly prisma: PrismaService,
    private readonly state: JobStateMachine,
    private readonly queue: JobQueue,
    private readonly syncs: ProviderSyncJobs,
  ) {}

  /**
   * The jobs of /sync run `runId` of a connection the caller locked, in its transaction: the
   * registration's provider-sync job (none when Leadgate does not register the connection:
   * registration `manual`) and the run's reconciliation job. Answers their ids for the run's row,
   * and the jobs to enqueue after the commit.
   */
  async syncRun(
    tx: Tx,
    connection: { tenantId: string; id: string; registrationStatus: string },
    runId: string,
  ): Promise<RunJobs & { jobs: EnqueueableJob[] }> {
    const target = { tenantId: connection.tenantId, connectionId: connection.id };
    const registration =
      connection.registrationStatus !== "manual" ? await this.syncs.start(tx, target, "sync") : [];
    const reconciliation = await this.runNow(tx, connection.tenantId, connection.id, runId);
    return {
      registrationJobId: registration[0]?.id ?? null,
      reconciliationJobId: reconciliation[0]?.id ?? null,
      jobs: [...registration, ...reconciliation],
    };
  }

  /**
   * Creates (and enqueues) a reconciliation run of the tenant's connection now, a job of its own.
   * Answers whether a run was made. An unknown connection, or another tenant's, is 404. A
   * connection without a provider API runs too: its run records `manual`.
   */
  async startNow(tenantId: string, connectionId: string): Promise<boolean> {
    const found = await this.prisma.connection.findFirst({
      where: { tenantId, id: connectionId },
      select: { id: true },
    });
    if (!found) throw new AppError(404, "not_found", "No such connection.");
    const jobs = await this.runNow(undefined, tenantId, connectionId, randomUUID());
    await this.queue.enqueue(jobs);
    return jobs.length > 0;
  }

  /**
   * The reconciliation job of run `runId` of a connection the caller found, made inside its
   * transaction (when given): answers the job to enqueue after the commit. Whether a run is new
   * is the caller's to decide (the /sync route joins a run still on its way).
   */
  runNow(
    tx: Tx | undefined,
    tenantId: string,
    connectionId: string,
    runId: string,
  ): Promise<EnqueueableJob[]> {
    return this.state.create(
      [{ tenantId, connectionId, operation: "reconciliation", jobKey: runKey(connectionId, runId) }],
      tx,
    );
  }
}
