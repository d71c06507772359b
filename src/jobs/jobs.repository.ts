import { Injectable } from "@nestjs/common";
import { PrismaService } from "../database/prisma.service.js";
import type { ContextRow } from "./job-context.js";
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
  /** The attempt row opened by the claim. */
  attemptId: string;
  startedAt: Date;
}

/** The receipt and connection columns a claim returns beside the job (null when missing). */
/** A running job whose worker has not said it is alive for this long counts as abandoned (claim may take it over). */
export const ABANDONED_AFTER_MS = 30_000;

const CONTEXT_COLUMNS = `r.id AS receipt_found_id, r.provider, r.account_id, r.event_id, r.lead_id, r.kind, r.occurred_at,
  r.raw_payload, c.id AS connection_id, c.tenant_id AS connection_tenant_id, c.provider AS connection_provider,
  c.external_account_id, c.status, c.settings, c.credentials, c.crm_signing_secret`;

export interface AttemptResult {
  status: "succeeded" | "retrying" | "dead" | "blocked";
  outcome: "succeeded" | "retryable" | "permanent" | "credential";
  errorCode?: string;
  nextAttemptAt?: Date;
}

/**
 * Job rows: the record of what was processed. The per-attempt statements are SQL on the Prisma
 * client's pool (one round trip each: claim + attempt row, finish + attempt row), because the
 * worker's throughput is bounded by per-query cost. Every statement names the tenant or the job's
 * own row.
 */
@Injectable()
export class JobsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Takes a job for one attempt, opens its attempt row and reads its receipt and connection, in one
   * statement. Only a job still to do (queued,
   * retrying, or running when its worker died mid-attempt) is taken; a finished, held, blocked or
   * cancelled one, or one another worker is running, is left alone. That makes a duplicate BullMQ
   * delivery or a stale re-enqueue harmless.
   */
  async claim(jobId: string): Promise<{ job: ClaimedJob; context: ContextRow } | undefined> {
    const { rows } = await this.prisma.pool.query<ClaimedJob & ContextRow>(
      `WITH job AS (
         UPDATE jobs SET status = 'running', attempts = attempts + 1, updated_at = now()
         WHERE id = $1::uuid
           AND (status IN ('queued', 'retrying')
                -- running: only when its worker stopped renewing it (ABANDONED_AFTER_MS)
                OR (status = 'running' AND updated_at < now() - $2::int * interval '1 millisecond'))
         RETURNING *
       ), abandoned AS (
         -- An attempt its run never closed (the worker died, or the database failed under it).
         UPDATE job_attempts SET finished_at = now(), outcome = 'abandoned',
                duration_ms = (extract(epoch FROM now() - started_at) * 1000)::int
         WHERE job_id = $1::uuid AND tenant_id = (SELECT tenant_id FROM job) AND finished_at IS NULL
       ), attempt AS (
         INSERT INTO job_attempts (tenant_id, job_id, number, started_at)
         SELECT tenant_id, id, attempts, now() FROM job
         RETURNING id, started_at
       )
       SELECT job.id, job.tenant_id AS "tenantId", job.connection_id AS "connectionId", job.receipt_id AS "receiptId",
              job.operation, job.job_key AS "jobKey", job.attempts, job.max_attempts AS "maxAttempts",
              attempt.id AS "attemptId", attempt.started_at AS "startedAt", ${CONTEXT_COLUMNS}
       FROM job CROSS JOIN attempt
       LEFT JOIN receipts r ON r.id = job.receipt_id AND r.tenant_id = job.tenant_id
       LEFT JOIN connections c ON c.id = job.connection_id AND c.tenant_id = job.tenant_id`,
      [jobId, ABANDONED_AFTER_MS],
    );
    const row = rows[0];
    // One row holds both: the job's columns and its receipt's and connection's.
    return row && { job: row, context: row };
  }

  /** Marks a running attempt alive (so it is not taken for abandoned while it runs long). */
  async heartbeat(job: ClaimedJob): Promise<void> {
    await this.prisma.pool.query(
      `UPDATE jobs SET updated_at = now()
       WHERE id = $1::uuid AND tenant_id = $2::uuid AND status = 'running' AND attempts = $3`,
      [job.id, job.tenantId, job.attempts],
    );
  }

  /** For a job `running` now: how long until claim may take it over (undefined when it is not running). */
  async untilAbandoned(jobId: string): Promise<number | undefined> {
    const { rows } = await this.prisma.pool.query<{ ms: number }>(
      `SELECT GREATEST(0, extract(epoch FROM updated_at + $2::int * interval '1 millisecond' - now()) * 1000)::int AS ms
       FROM jobs WHERE id = $1::uuid AND status = 'running'`,
      [jobId, ABANDONED_AFTER_MS],
    );
    return rows[0]?.ms;
  }

  /** Closes the attempt and moves the job to its next status, in one statement. */
  async finish(job: ClaimedJob, result: AttemptResult): Promise<void> {
    const terminal = result.status === "succeeded" || result.status === "dead";
    await this.prisma.pool.query(
      `WITH attempt AS (
         UPDATE job_attempts SET finished_at = now(), outcome = $3, error_code = $4,
                duration_ms = (extract(epoch FROM now() - started_at) * 1000)::int
         WHERE id = $2::uuid AND tenant_id = $5::uuid
       )
       UPDATE jobs SET status = $6, updated_at = now(),
              next_attempt_at = COALESCE($7::timestamptz, next_attempt_at),
              last_error_code = CASE WHEN $3 = 'succeeded' THEN last_error_code ELSE $4 END,
              last_error_at = CASE WHEN $3 = 'succeeded' THEN last_error_at ELSE now() END,
              completed_at = CASE WHEN $8 THEN now() ELSE completed_at END
       WHERE id = $1::uuid AND tenant_id = $5::uuid AND status = 'running' AND attempts = $9`,
      [
        job.id,
        job.attemptId,
        result.outcome,
        result.errorCode ?? null,
        job.tenantId,
        result.status,
        result.nextAttemptAt ?? null,
        terminal,
        job.attempts,
      ],
    );
  }

  /**
   * The job cannot run now (held: connection paused; blocked: credential problem; cancelled:
   * connection disabled): no attempt is counted.
   */
  async park(job: ClaimedJob, status: "held" | "blocked" | "cancelled"): Promise<void> {
    await this.prisma.pool.query(
      `WITH attempt AS (DELETE FROM job_attempts WHERE id = $2::uuid AND tenant_id = $3::uuid)
       UPDATE jobs SET status = $4, attempts = attempts - 1, updated_at = now(),
              completed_at = CASE WHEN $4 = 'cancelled' THEN now() ELSE completed_at END
       WHERE id = $1::uuid AND tenant_id = $3::uuid AND status = 'running' AND attempts = $5`,
      [job.id, job.attemptId, job.tenantId, status, job.attempts],
    );
  }

  /** A provider refused the connection's credentials: no more calls until an operator resumes it. */
  async markCredentialError(tenantId: string, connectionId: string): Promise<void> {
    await this.prisma.connection.updateMany({
      where: { id: connectionId, tenantId, status: "active" },
      data: { status: "credential_error" },
    });
  }

  /**
   * Held jobs whose connection is active again go back to queued. Resume does this for the jobs it
   * sees; this catches the ones it could not: a delivery that read the connection as paused and
   * committed after the resume, or a worker that parked a job just after it.
   */
  releaseHeld(graceMs: number, limit: number) {
    return this.prisma.$queryRaw<{ id: string; jobKey: string; operation: Operation }[]>`
      UPDATE jobs SET status = 'queued', next_attempt_at = now(), updated_at = now()
      WHERE id IN (
        SELECT j.id FROM jobs j JOIN connections c ON c.id = j.connection_id AND c.tenant_id = j.tenant_id
        WHERE j.status = 'held' AND c.status = 'active'
          AND j.updated_at <= now() - make_interval(secs => ${graceMs / 1000})
        LIMIT ${limit})
        AND status = 'held'
      RETURNING id, job_key AS "jobKey", operation`;
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
