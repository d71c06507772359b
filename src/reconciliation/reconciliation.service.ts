// The API side of reconciliation: start a connection's run now (POST /admin/connections/{id}/sync).
// Admin routes import this folder, never the reverse (so it names no admin module).
import { Injectable } from "@nestjs/common";
import { AppError } from "../common/app-error.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Tx } from "../database/transactions.js";
import { type EnqueueableJob, JobQueue } from "../jobs/job-queue.js";
import { jobKey } from "../jobs/operations.js";
import { JobStateMachine } from "../jobs/state/job-state-machine.js";

/** Start-now runs of one connection are keyed per minute: repeated clicks within it make one run. */
const START_NOW_BUCKET_MS = 60_000;

@Injectable()
export class Reconciliation {
  constructor(
    private readonly prisma: PrismaService,
    private readonly state: JobStateMachine,
    private readonly queue: JobQueue,
  ) {}

  /**
   * Creates (and enqueues) a reconciliation run of the tenant's connection now, keyed by connection
   * + minute. Answers whether a new run was made (false: one of this minute exists already). An
   * unknown connection, or another tenant's, is 404. A connection without a provider API runs too:
   * its run records `manual`.
   */
  async startNow(tenantId: string, connectionId: string, now = new Date()): Promise<boolean> {
    const found = await this.prisma.connection.findFirst({
      where: { tenantId, id: connectionId },
      select: { id: true },
    });
    if (!found) throw new AppError(404, "not_found", "No such connection.");
    const jobs = await this.runNow(undefined, tenantId, connectionId, now);
    await this.queue.enqueue(jobs);
    return jobs.length > 0;
  }

  /**
   * The reconciliation run of a connection the caller found, made now inside its transaction (when
   * given): answers the job to enqueue after the commit, none when this minute's run exists already.
   */
  runNow(
    tx: Tx | undefined,
    tenantId: string,
    connectionId: string,
    now = new Date(),
  ): Promise<EnqueueableJob[]> {
    const minute = Math.floor(now.getTime() / START_NOW_BUCKET_MS);
    return this.state.create(
      [
        {
          tenantId,
          connectionId,
          operation: "reconciliation",
          jobKey: jobKey("reconciliation", `${connectionId}.now.${minute}`),
        },
      ],
      tx,
    );
  }
}
