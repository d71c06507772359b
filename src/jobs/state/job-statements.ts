// The job state machine's statements that run alone, unbatched: creating jobs, a running attempt's
// heartbeat, taking a claim back (skip, wait), and the sweeps of the dispatcher and of a disable
// that are not requeues (src/jobs/state/requeue.ts has those). JobStateMachine delegates to these
// and reports what they refused (and the job outbox, src/jobs/job-outbox.ts, creates its jobs with
// `create`); each statement's text is tuned, keep it as it is.
import type { SqlBatch } from "../../common/sql-batch.js";
import type { PrismaService } from "../../database/prisma.service.js";
import type { Tx } from "../../database/transactions.js";
import type { EnqueueableJob } from "../job-queue.js";
import type { JobOutcome } from "../job-outcomes.js";
import {
  ABANDONED_AFTER_MS,
  type ClaimedJob,
  type Moved,
  type NewJob,
  type Skip,
} from "./job-state-types.js";
import { sourceStatuses as from } from "./job-states.js";
import { ALLOWANCES } from "./requeue.js";
import { AFTER } from "./sql-fragments.js";

/**
 * Creating jobs is the machine's first step: the INSERT that the receipt writer embeds in its
 * single ingest statement. `source` selects (tenant_id, connection_id, receipt_id, operation,
 * job_key, status, max_attempts), with status from `initialStatus`; a job created `waiting` waits
 * for its dependency. Rows go in job-key order (concurrent batches lock keys in one order).
 */
export function insertJobsSql(source: string): string {
  return `INSERT INTO jobs (tenant_id, connection_id, receipt_id, operation, job_key, status, max_attempts,
                    waiting_for, waiting_since)
  SELECT s.*, CASE WHEN s.status = 'waiting' THEN 'dependency' END, CASE WHEN s.status = 'waiting' THEN now() END
  FROM (${source}) AS s(tenant_id, connection_id, receipt_id, operation, job_key, status, max_attempts)
  ORDER BY s.job_key
  ON CONFLICT (job_key) DO NOTHING
  RETURNING id, receipt_id, job_key, operation, status`;
}

/** Creating jobs of a connection or an alert, `queued` (JobStateMachine.create). */
export function create(prisma: PrismaService, jobs: NewJob[], tx?: Tx): Promise<EnqueueableJob[]> {
  if (jobs.length === 0) return Promise.resolve([]);
  const db = tx ?? prisma;
  return db.$queryRawUnsafe<EnqueueableJob[]>(
    `INSERT INTO jobs (tenant_id, connection_id, alert_id, operation, job_key, status, max_attempts)
       SELECT j.tenant_id, j.connection_id, j.alert_id, j.operation, j.job_key, 'queued',
              ($2::jsonb ->> j.operation)::int
       FROM jsonb_to_recordset($1::jsonb)
         AS j(tenant_id uuid, connection_id uuid, alert_id uuid, operation text, job_key text)
       ORDER BY j.job_key
       ON CONFLICT (job_key) DO NOTHING
       RETURNING id, job_key AS "jobKey", operation`,
    JSON.stringify(
      jobs.map((job) => ({
        tenant_id: job.tenantId,
        connection_id: job.connectionId,
        alert_id: job.alertId ?? null,
        operation: job.operation,
        job_key: job.jobKey,
      })),
    ),
    ALLOWANCES,
  );
}

/** Marks this run's attempt of a running job alive (JobStateMachine.heartbeat). */
export async function heartbeat(sql: SqlBatch, job: ClaimedJob): Promise<void> {
  await sql.query(
    `UPDATE jobs SET updated_at = now()
       WHERE id = $1::uuid AND tenant_id = $2::uuid AND status = 'running' AND attempts = $3`,
    [job.id, job.tenantId, job.attempts],
  );
}

/** How long until a running job counts as abandoned (JobStateMachine.untilAbandoned). */
export async function untilAbandoned(prisma: PrismaService, jobId: string): Promise<number | undefined> {
  const { rows } = await prisma.pool.query<{ ms: number }>(
    `SELECT GREATEST(0, extract(epoch FROM updated_at + $2::int * interval '1 millisecond' - now()) * 1000)::int AS ms
       FROM jobs WHERE id = $1::uuid AND status = 'running'`,
    [jobId, ABANDONED_AFTER_MS],
  );
  return rows[0]?.ms;
}

/**
 * A transition that takes back this run's claim (attempts - 1: the attempt is not written)
 * and sets `set` (parameters from $5); answers how many jobs it moved (undefined: no answer).
 */
export async function undoClaim(
  sql: SqlBatch,
  job: ClaimedJob,
  transition: Skip | "wait",
  set: string,
  values: unknown[],
): Promise<number | undefined> {
  const { rows } = await sql.query<Moved>(
    `WITH moved AS (
         UPDATE jobs SET ${set}, attempts = attempts - 1, updated_at = now()
         WHERE id = $1::uuid AND tenant_id = $2::uuid AND status = ANY($4::text[]) AND attempts = $3
         RETURNING id
       )
       SELECT count(*)::int AS moved FROM moved`,
    [job.id, job.tenantId, job.attempts, from(transition), ...values],
  );
  return rows[0]?.moved;
}

/**
 * wait, for a dependency that has still not succeeded, read under a share lock
 * (JobStateMachine.waitForDependency): how many jobs it moved, and whether the dependency succeeded.
 */
export async function waitForDependency(
  prisma: PrismaService,
  job: ClaimedJob,
  until: Date,
): Promise<{ moved: number; satisfied: boolean }> {
  const { rows } = await prisma.pool.query<Moved & { satisfied: boolean }>(
    `WITH dependency AS (
         SELECT status FROM jobs
         WHERE tenant_id = $2::uuid AND receipt_id = $5::uuid AND operation = ($6::jsonb ->> $7::text)
         FOR SHARE
       ), moved AS (
         UPDATE jobs SET status = 'waiting', waiting_for = 'dependency', waiting_since = COALESCE(waiting_since, now()),
                next_attempt_at = $8, attempts = attempts - 1, updated_at = now()
         WHERE id = $1::uuid AND tenant_id = $2::uuid AND status = ANY($4::text[]) AND attempts = $3
           AND EXISTS (SELECT 1 FROM dependency WHERE status <> 'succeeded')
         RETURNING id
       )
       SELECT (SELECT count(*) FROM moved)::int AS moved,
              NOT EXISTS (SELECT 1 FROM dependency WHERE status <> 'succeeded') AS satisfied`,
    [job.id, job.tenantId, job.attempts, from("wait"), job.receiptId, AFTER, job.operation, until],
  );
  const { moved = 0, satisfied = false } = rows[0] ?? {};
  return { moved, satisfied };
}

/** expire: jobs waiting for `maxWaitSeconds` are dead (JobStateMachine.expireWaits); answers them. */
export function expireWaits(tx: Tx, maxWaitSeconds: number, limit: number): Promise<JobOutcome[]> {
  return tx.$queryRawUnsafe<JobOutcome[]>(
    `UPDATE jobs SET status = 'dead', waiting_for = NULL, last_error_code = 'wait_expired',
              last_error_at = now(), completed_at = now(), updated_at = now()
       WHERE id IN (SELECT id FROM jobs WHERE status = 'waiting'
                      AND waiting_since <= now() - make_interval(secs => $1::float8) LIMIT $2::int)
         AND status = ANY($3::text[])
       RETURNING tenant_id AS "tenantId", connection_id AS "connectionId", operation, last_error_code AS "errorCode"`,
    maxWaitSeconds,
    limit,
    from("expire"),
  );
}

/** cancel: a disabled connection's jobs not running (JobStateMachine.cancelConnection); answers how many. */
export function cancelConnection(tx: Tx, tenantId: string, connectionId: string): Promise<number> {
  return tx.$executeRawUnsafe(
    `UPDATE jobs SET status = 'cancelled', waiting_for = NULL, completed_at = now(), updated_at = now()
       WHERE tenant_id = $1::uuid AND connection_id = $2::uuid AND status = ANY($3::text[])`,
    tenantId,
    connectionId,
    from("cancel"),
  );
}

/** The work the dispatcher (re-)enqueues, a read (JobStateMachine.due). */
export async function due(
  prisma: PrismaService,
  graceMs: number,
  staleRunningMs: number,
  limit: number,
): Promise<EnqueueableJob[]> {
  const { rows } = await prisma.pool.query<EnqueueableJob>(
    `SELECT id, job_key AS "jobKey", operation FROM jobs
       WHERE (status IN ('queued', 'retrying') AND next_attempt_at <= now() - make_interval(secs => $1)
                                               AND updated_at <= now() - make_interval(secs => $1))
          OR (status = 'waiting' AND waiting_for <> 'dependency' AND next_attempt_at <= now())
          OR (status = 'running' AND updated_at <= now() - make_interval(secs => $2))
       ORDER BY next_attempt_at
       LIMIT $3`,
    [graceMs / 1000, staleRunningMs / 1000, limit],
  );
  return rows;
}

/** Ends the circuit wait of the given jobs now (JobStateMachine.endCircuitWaits); answers which. */
export async function endCircuitWaits(prisma: PrismaService, jobIds: string[]): Promise<EnqueueableJob[]> {
  const { rows } = await prisma.pool.query<EnqueueableJob>(
    `UPDATE jobs SET next_attempt_at = now(), updated_at = now()
       WHERE id = ANY($1::uuid[]) AND status = 'waiting' AND waiting_for = 'circuit'
       RETURNING id, job_key AS "jobKey", operation`,
    [jobIds],
  );
  return rows;
}
