// The requeue policy in SQL, and the statements that apply it: release (a succeed's dependents,
// parked jobs, satisfied waits), resume and replay move a job back to `queued` with the same
// columns (REQUEUE_SET), its attempts made kept and its operation's allowance given again
// (requeuedMaxAttempts of src/jobs/state/job-states.ts). JobStateMachine delegates to these; each
// statement's text is tuned, keep it as it is.
import { type TenantScope, tenantParam } from "../../auth/principal.js";
import type { SqlBatch } from "../../common/sql-batch.js";
import type { PrismaService } from "../../database/prisma.service.js";
import type { Tx } from "../../database/transactions.js";
import type { EnqueueableJob } from "../job-queue.js";
import { dependentsOf, OPERATION_SETTINGS } from "../operations.js";
import type { ClaimedJob } from "./job-state-types.js";
import { type JobStatus, type ReplayableStatus, sourceStatuses as from } from "./job-states.js";
import { AFTER, SUCCEEDED_ATTEMPT } from "./sql-fragments.js";

/** Attempts a requeued job gets, per operation (requeuedMaxAttempts in SQL: attempts + allowance). */
export const ALLOWANCES = JSON.stringify(
  Object.fromEntries(Object.entries(OPERATION_SETTINGS).map(([op, settings]) => [op, settings.attempts])),
);
/** A requeue's columns but its status. */
export const REQUEUE_COLUMNS = (allowancesParam: string) => `waiting_for = NULL, waiting_since = NULL,
  next_attempt_at = now(), updated_at = now(), completed_at = NULL,
  max_attempts = jobs.attempts + (${allowancesParam}::jsonb ->> jobs.operation)::int`;
const REQUEUE_SET = (allowancesParam: string) => `status = 'queued', ${REQUEUE_COLUMNS(allowancesParam)}`;

/**
 * release, of a receipt's jobs of `operations` that wait for a dependency (SQL expressions for each
 * value); answers them, to be enqueued.
 */
const RELEASE_DEPENDENTS = (sql: {
  tenant: string;
  receipt: string;
  operations: string;
  from: string;
  allowances: string;
}) => `UPDATE jobs SET ${REQUEUE_SET(sql.allowances)}
  WHERE tenant_id = ${sql.tenant}::uuid AND receipt_id = ${sql.receipt} AND operation = ANY(${sql.operations}::text[])
    AND status = ANY(${sql.from}::text[]) AND waiting_for = 'dependency'
  RETURNING id, job_key AS "jobKey", operation`;

/** release: the jobs of `job`'s receipt that wait for it (JobStateMachine.succeed). */
export async function releaseDependents(sql: SqlBatch, job: ClaimedJob): Promise<EnqueueableJob[]> {
  const { rows } = await sql.query<EnqueueableJob>(
    RELEASE_DEPENDENTS({
      tenant: "$1",
      receipt: "$2::uuid",
      operations: "$3",
      from: "$4",
      allowances: "$5",
    }),
    [job.tenantId, job.receiptId, dependentsOf(job.operation), from("release", ["waiting"]), ALLOWANCES],
  );
  return rows;
}

/** release: held and blocked jobs of active connections, untouched for `graceMs` (JobStateMachine.releaseParked). */
export async function releaseParked(
  prisma: PrismaService,
  graceMs: number,
  limit: number,
): Promise<EnqueueableJob[]> {
  const { rows } = await prisma.pool.query<EnqueueableJob>(
    `UPDATE jobs SET ${REQUEUE_SET("$4")}
       WHERE id IN (
         SELECT j.id FROM jobs j JOIN connections c ON c.id = j.connection_id AND c.tenant_id = j.tenant_id
         WHERE j.status IN ('held', 'blocked') AND c.status = 'active'
           AND j.updated_at <= now() - make_interval(secs => $1)
         LIMIT $2)
         AND status = ANY($3::text[])
       RETURNING id, job_key AS "jobKey", operation`,
    [graceMs / 1000, limit, from("release"), ALLOWANCES],
  );
  return rows;
}

/** release: dependency waits whose dependency succeeded (or is gone) (JobStateMachine.releaseSatisfiedWaits). */
export async function releaseSatisfiedWaits(
  prisma: PrismaService,
  graceMs: number,
  limit: number,
): Promise<EnqueueableJob[]> {
  const { rows } = await prisma.pool.query<EnqueueableJob>(
    `UPDATE jobs SET ${REQUEUE_SET("$4")}
       WHERE id IN (
         SELECT j.id FROM jobs j
         WHERE j.status = 'waiting' AND j.waiting_for = 'dependency'
           AND j.updated_at <= now() - make_interval(secs => $1)
           AND NOT EXISTS (SELECT 1 FROM jobs d WHERE d.receipt_id = j.receipt_id AND d.tenant_id = j.tenant_id
                             AND d.operation = ($5::jsonb ->> j.operation) AND d.status <> 'succeeded')
         LIMIT $2)
         AND status = ANY($3::text[]) AND waiting_for = 'dependency'
       RETURNING id, job_key AS "jobKey", operation`,
    [graceMs / 1000, limit, from("release", ["waiting"]), ALLOWANCES, AFTER],
  );
  return rows;
}

/** resume: a connection's held and blocked jobs (JobStateMachine.resumeConnection). */
export function resumeConnection(tx: Tx, tenantId: string, connectionId: string): Promise<EnqueueableJob[]> {
  return tx.$queryRawUnsafe<EnqueueableJob[]>(
    `UPDATE jobs SET ${REQUEUE_SET("$4")}
       WHERE tenant_id = $1::uuid AND connection_id = $2::uuid AND status = ANY($3::text[])
       RETURNING id, job_key AS "jobKey", operation`,
    tenantId,
    connectionId,
    from("resume"),
    ALLOWANCES,
  );
}

/**
 * replay: the scope's given jobs whose status is in `only` (JobStateMachine.replay); a succeeded
 * one's last attempt is written to the history first (SUCCEEDED_ATTEMPT: its jobs locked before).
 */
export function replay(
  tx: Tx,
  scope: TenantScope,
  where: { jobIds?: string[]; receiptId?: string },
  only: readonly JobStatus[],
): Promise<EnqueueableJob[]> {
  return tx.$queryRawUnsafe<EnqueueableJob[]>(
    `WITH requeued AS (
         UPDATE jobs SET ${REQUEUE_SET("$5")}
         WHERE ($1::uuid IS NULL OR tenant_id = $1::uuid)
           AND ($2::uuid[] IS NULL OR id = ANY($2::uuid[]))
           AND ($3::uuid IS NULL OR receipt_id = $3::uuid)
           AND status = ANY($4::text[])
         RETURNING id, job_key AS "jobKey", operation
       ), kept AS (${SUCCEEDED_ATTEMPT("requeued")})
       SELECT * FROM requeued`,
    tenantParam(scope),
    where.jobIds ?? null,
    where.receiptId ?? null,
    from("replay", only),
    ALLOWANCES,
  );
}

/**
 * replay, of a bulk replay's next `count` pending items (JobStateMachine.replayBatchStep): never
 * from succeeded (whose last attempt `replay` would have to write first).
 */
export function replayBatchStep(
  prisma: PrismaService,
  batchId: string,
  only: readonly ReplayableStatus[],
  count: number,
): Promise<EnqueueableJob[]> {
  return prisma.$queryRawUnsafe<EnqueueableJob[]>(
    `WITH picked AS (
         SELECT job_id, tenant_id FROM replay_batch_jobs
         WHERE batch_id = $1::uuid AND state = 'pending'
         ORDER BY job_id LIMIT $2 FOR UPDATE SKIP LOCKED
       ), requeued AS (
         UPDATE jobs SET ${REQUEUE_SET("$4")}
         FROM picked WHERE jobs.id = picked.job_id AND jobs.tenant_id = picked.tenant_id
           AND jobs.status = ANY($3::text[])
         RETURNING jobs.id, jobs.job_key AS "jobKey", jobs.operation
       ), marked AS (
         UPDATE replay_batch_jobs i
         SET state = CASE WHEN i.job_id IN (SELECT id FROM requeued) THEN 'queued' ELSE 'skipped' END
         FROM picked WHERE i.batch_id = $1::uuid AND i.job_id = picked.job_id
       )
       SELECT * FROM requeued`,
    batchId,
    count,
    from("replay", only),
    ALLOWANCES,
  );
}
