import { Injectable } from "@nestjs/common";
import { PrismaService } from "../database/prisma.service.js";
import type { Operation } from "./operations.js";

export interface ClaimedJob {
  id: string;
  tenantId: string;
  connectionId: string;
  receiptId: string;
  operation: Operation;
  jobKey: string;
  attempts: number;
  maxAttempts: number;
}

export interface AttemptResult {
  status: "succeeded" | "retrying" | "dead" | "blocked";
  outcome: "succeeded" | "retryable" | "permanent" | "credential";
  errorCode?: string;
  nextAttemptAt?: Date;
}

/** Job rows: the record of what was processed. Every write names the tenant. */
@Injectable()
export class JobsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Takes a job for one attempt: only a job still to do (queued, retrying, or running when a
   * worker died mid-attempt) is taken; a finished, held, blocked or cancelled one is left alone,
   * which makes a duplicate BullMQ delivery or a stale re-enqueue harmless.
   */
  async claim(jobId: string): Promise<ClaimedJob | undefined> {
    const rows = await this.prisma.$queryRaw<ClaimedJob[]>`
      UPDATE jobs SET status = 'running', attempts = attempts + 1, updated_at = now()
      WHERE id = ${jobId}::uuid AND status IN ('queued', 'retrying', 'running')
      RETURNING id, tenant_id AS "tenantId", connection_id AS "connectionId", receipt_id AS "receiptId",
                operation, job_key AS "jobKey", attempts, max_attempts AS "maxAttempts"`;
    return rows[0];
  }

  startAttempt(job: ClaimedJob, startedAt: Date): Promise<{ id: string }> {
    return this.prisma.jobAttempt.create({
      data: { tenantId: job.tenantId, jobId: job.id, number: job.attempts, startedAt },
      select: { id: true },
    });
  }

  /** Closes the attempt and moves the job to its next status, together. */
  async finish(job: ClaimedJob, attemptId: string, startedAt: Date, result: AttemptResult): Promise<void> {
    const now = new Date();
    const failed = result.outcome !== "succeeded";
    await this.prisma.$transaction([
      this.prisma.jobAttempt.update({
        where: { id: attemptId, tenantId: job.tenantId },
        data: {
          finishedAt: now,
          outcome: result.outcome,
          errorCode: result.errorCode ?? null,
          durationMs: now.getTime() - startedAt.getTime(),
        },
      }),
      this.prisma.job.update({
        where: { id: job.id, tenantId: job.tenantId },
        data: {
          status: result.status,
          ...(result.nextAttemptAt ? { nextAttemptAt: result.nextAttemptAt } : {}),
          ...(failed ? { lastErrorCode: result.errorCode ?? null, lastErrorAt: now } : {}),
          ...(result.status === "succeeded" || result.status === "dead" ? { completedAt: now } : {}),
        },
      }),
    ]);
  }

  /** Leaves a job untouched but for its status (held: connection paused; blocked: credentials). */
  async park(job: ClaimedJob, status: "held" | "blocked"): Promise<void> {
    await this.prisma.job.update({
      where: { id: job.id, tenantId: job.tenantId },
      data: { status, attempts: { decrement: 1 } },
    });
  }

  /** A provider refused the connection's credentials: no more calls until an operator resumes it. */
  async markCredentialError(tenantId: string, connectionId: string): Promise<void> {
    await this.prisma.connection.updateMany({
      where: { id: connectionId, tenantId, status: "active" },
      data: { status: "credential_error" },
    });
  }

  /**
   * Work the dispatcher (re-)enqueues: queued or retrying jobs due a while ago (so jobs just handed
   * to BullMQ are not raced), and running jobs whose worker has not touched them for long.
   */
  due(graceMs: number, staleRunningMs: number, limit: number) {
    return this.prisma.$queryRaw<{ id: string; jobKey: string; operation: Operation }[]>`
      SELECT id, job_key AS "jobKey", operation FROM jobs
      WHERE (status IN ('queued', 'retrying') AND next_attempt_at <= now() - make_interval(secs => ${graceMs / 1000})
                                              AND updated_at <= now() - make_interval(secs => ${graceMs / 1000}))
         OR (status = 'running' AND updated_at <= now() - make_interval(secs => ${staleRunningMs / 1000}))
      ORDER BY next_attempt_at
      LIMIT ${limit}`;
  }
}
