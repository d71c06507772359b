// The statements of a worker's hot path that run batched (JobStateMachine's NaturalBatchers, each
// statement riding in the process's SqlBatch): claim, succeed (with release, or release and claim)
// and retry / die / block, each for all the jobs of one batch in one statement. SqlBatch prepares
// each text by name: keep the texts as they are. A succeed or finish batch whose jobs' outcomes
// matter beyond their rows (JobOutcomes) runs its statement in a transaction instead (inTransaction).
import type pg from "pg";
import type { SqlBatch } from "../../common/sql-batch.js";
import type { PrismaService } from "../../database/prisma.service.js";
import type { Tx } from "../../database/transactions.js";
import type { JobOutcome, JobOutcomes } from "../job-outcomes.js";
import { dependentsOf } from "../operations.js";
import {
  ABANDONED_AFTER_MS,
  type AttemptOutcome,
  type ClaimedJob,
  type ConnectionNow,
  type Finish,
  type ReleasedJob,
  type SucceedOptions,
} from "./job-state-types.js";
import { sourceStatuses as from, TRANSITIONS } from "./job-states.js";
import { ALLOWANCES, REQUEUE_COLUMNS } from "./requeue.js";
import { AFTER, CONNECTION_NOW, DURATION_MS, SIDE_EFFECT_OF, WRITE_ATTEMPTS } from "./sql-fragments.js";

/** Where a batch statement runs: the process's SqlBatch, or a transaction (inTransaction). */
export interface StatementRunner {
  query<Row extends pg.QueryResultRow>(text: string, values: readonly unknown[]): Promise<{ rows: Row[] }>;
}

/** A batch statement in `tx` (parameters as SqlBatch takes them). */
export function inTransaction(tx: Tx): StatementRunner {
  return {
    query: async <Row extends pg.QueryResultRow>(text: string, values: readonly unknown[]) => ({
      rows: await tx.$queryRawUnsafe<Row[]>(text, ...values),
    }),
  };
}

/**
 * Claims and successes of concurrently running jobs go to Postgres in one statement per batch
 * (natural batching: no timer; the statement itself rides in the process's SqlBatch); a job is in a
 * batch at most once, two batches may be in flight.
 */
export function oneStatementPerBatch<Item>(idOf: (item: Item) => string) {
  return {
    maxBatch: 100,
    maxInFlight: 2,
    admit: () => {
      const seen = new Set<string>();
      return (item: Item) => !seen.has(idOf(item)) && Boolean(seen.add(idOf(item)));
    },
  };
}

/** A retry, die or block of a job that ran: how its attempt ended. */
export interface FinishOf {
  job: ClaimedJob;
  transition: Exclude<Finish, "succeed">;
  result: { outcome: AttemptOutcome; errorCode: string; nextAttemptAt?: Date };
}

/** What a succeed did besides moving the job: the dependents it released, and whether one may still be on its way to waiting. */
export interface Closed {
  released: ReleasedJob[];
  unsettled: boolean;
}

export interface SucceedOf {
  job: ClaimedJob;
  options: SucceedOptions;
}

/** A released job as succeedMany's statement answers it (startedAt set when it was claimed). */
type ReleasedRow = Omit<ClaimedJob, "startedAt" | "dependencyStatus"> & {
  startedAt: string | null;
  connection: ConnectionNow | null;
};

function releasedJob({ startedAt, connection, ...row }: ReleasedRow): ReleasedJob {
  const released: ReleasedJob = { id: row.id, jobKey: row.jobKey, operation: row.operation };
  if (startedAt === null) return released;
  // Claimed by the statement that saw its dependency succeed.
  return {
    ...released,
    claimed: { ...row, startedAt: new Date(startedAt), dependencyStatus: "succeeded" },
    ...(connection ? { connection } : {}),
  };
}

/** claim, of the jobs of one batch in one statement (answers, per id, the claimed job or undefined). */
export async function claimMany(
  sql: SqlBatch,
  jobIds: string[],
  context: string,
): Promise<(ClaimedJob | undefined)[]> {
  const { rows } = await sql.query<ClaimedJob>(
    `WITH locked AS (
         SELECT id, status, attempt_started_at FROM jobs WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE
       ), job AS (
         UPDATE jobs SET status = 'running', waiting_for = NULL, attempts = attempts + 1,
                attempt_started_at = now(), updated_at = now()
         WHERE id = ANY(ARRAY(SELECT id FROM locked))
           AND status = ANY($3::text[])
           AND (status IN ('queued', 'retrying')
                OR (status = 'waiting' AND waiting_for <> 'dependency' AND next_attempt_at <= now())
                OR (status = 'running' AND updated_at < now() - $2::int * interval '1 millisecond'))
         RETURNING *
       ), abandoned AS (
         -- The attempt of a run that never ended (its worker died, or the database failed under it):
         -- the job was running when this claim locked it.
         INSERT INTO job_attempts AS a (tenant_id, job_id, job_created_at, number, started_at, finished_at, outcome, duration_ms)
         SELECT job.tenant_id, job.id, job.created_at, job.attempts - 1, COALESCE(l.attempt_started_at, now()), now(), 'abandoned',
                ${DURATION_MS("COALESCE(l.attempt_started_at, now())")}
         FROM job JOIN locked l ON l.id = job.id WHERE l.status = 'running'
         ON CONFLICT (job_id, number, job_created_at) DO UPDATE SET finished_at = now(), outcome = 'abandoned',
           duration_ms = ${DURATION_MS("a.started_at")}
         WHERE a.finished_at IS NULL
       )
       SELECT job.id, job.tenant_id AS "tenantId", job.connection_id AS "connectionId", job.receipt_id AS "receiptId",
              job.alert_id AS "alertId", job.operation, job.job_key AS "jobKey", job.attempts, job.max_attempts AS "maxAttempts",
              job.attempt_started_at AS "startedAt", job.last_error_code AS "lastErrorCode",
              CASE WHEN ($4::jsonb ->> job.operation) IS NOT NULL
                   THEN (SELECT d.status FROM jobs d WHERE d.receipt_id = job.receipt_id AND d.tenant_id = job.tenant_id
                           AND d.operation = ($4::jsonb ->> job.operation))
              END AS "dependencyStatus",
              ${SIDE_EFFECT_OF("job")} AS "sideEffect", ${context}
       FROM job
       LEFT JOIN receipts r ON r.id = job.receipt_id AND r.tenant_id = job.tenant_id
       LEFT JOIN connections c ON c.id = job.connection_id AND c.tenant_id = job.tenant_id`,
    [jobIds, ABANDONED_AFTER_MS, from("claim"), AFTER],
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  return jobIds.map((id) => byId.get(id));
}

/**
 * succeed (and release, or release and claim), of the jobs of one batch in one statement. The
 * attempt that succeeded stays on the job row (SUCCEEDED_ATTEMPT): no attempt row is written.
 */
export async function succeedMany(
  sql: StatementRunner,
  succeeds: SucceedOf[],
): Promise<(Closed | undefined)[]> {
  const input = succeeds.map(({ job, options }) => ({
    id: job.id,
    tenant_id: job.tenantId,
    attempts: job.attempts,
    dependents: job.receiptId !== null ? dependentsOf(job.operation) : [],
    claim: options.claimReleased === true,
    record: options.record === true,
  }));
  const { rows } = await sql.query<{ id: string; unsettled: boolean; released: ReleasedRow[] }>(
    `WITH input AS (
         SELECT * FROM jsonb_to_recordset($1::jsonb)
           AS i(id uuid, tenant_id uuid, attempts int, dependents text[], claim boolean, record boolean)
       ), moved AS (
         UPDATE jobs SET status = 'succeeded', updated_at = now(), waiting_since = NULL, completed_at = now()
         FROM input i
         WHERE jobs.id = ANY($5::uuid[]) AND jobs.id = i.id AND jobs.tenant_id = i.tenant_id
           AND jobs.status = ANY($2::text[]) AND jobs.attempts = i.attempts
         RETURNING jobs.id, jobs.tenant_id, jobs.receipt_id, jobs.job_key, jobs.operation, i.dependents, i.claim, i.record
       ), recorded AS (
         INSERT INTO side_effects (tenant_id, job_key, operation, status)
         SELECT tenant_id, job_key, operation, 'succeeded' FROM moved WHERE record
         ON CONFLICT (job_key) DO UPDATE SET status = 'succeeded', updated_at = now()
       ), released AS (
         -- release (to queued), or release and claim (to running, attempts + 1: as claim leaves a job).
         UPDATE jobs SET status = CASE WHEN m.claim THEN 'running' ELSE 'queued' END,
                attempts = jobs.attempts + m.claim::int,
                attempt_started_at = CASE WHEN m.claim THEN now() ELSE jobs.attempt_started_at END, ${REQUEUE_COLUMNS("$4")}
         FROM moved m
         -- The ids first, read off the receipt index (whatever the planner believes of the statuses),
         -- for the jobs that have dependents only.
         WHERE jobs.id = ANY(ARRAY(SELECT d.id FROM moved dm JOIN jobs d
                                     ON cardinality(dm.dependents) > 0 AND d.receipt_id = dm.receipt_id
                                        AND d.tenant_id = dm.tenant_id AND d.operation = ANY(dm.dependents)))
           AND jobs.tenant_id = m.tenant_id AND jobs.receipt_id = m.receipt_id AND jobs.operation = ANY(m.dependents)
           AND jobs.status = ANY($3::text[]) AND jobs.waiting_for = 'dependency'
         RETURNING jobs.*, m.id AS "releasedBy"
       )
       SELECT m.id,
              COALESCE((SELECT json_agg(json_build_object('id', r.id, 'tenantId', r.tenant_id,
                          'connectionId', r.connection_id, 'receiptId', r.receipt_id, 'alertId', r.alert_id,
                          'operation', r.operation, 'jobKey', r.job_key, 'attempts', r.attempts,
                          'maxAttempts', r.max_attempts, 'lastErrorCode', r.last_error_code,
                          'startedAt', CASE WHEN r.status = 'running' THEN r.attempt_started_at END,
                          'sideEffect', ${SIDE_EFFECT_OF("r")}, 'connection', ${CONNECTION_NOW("r")}))
                        FROM released r WHERE r."releasedBy" = m.id), '[]'::json) AS released,
              CASE WHEN cardinality(m.dependents) = 0 THEN false
                   ELSE EXISTS (SELECT 1 FROM jobs d WHERE d.tenant_id = m.tenant_id AND d.receipt_id = m.receipt_id
                                  AND d.operation = ANY(m.dependents) AND d.status IN ('queued', 'retrying', 'running'))
              END AS unsettled
       FROM moved m`,
    [
      JSON.stringify(input),
      from("succeed"),
      from("release", ["waiting"]),
      ALLOWANCES,
      succeeds.map(({ job }) => job.id),
    ],
  );
  const byId = new Map(
    rows.map(({ id, unsettled, released }) => [id, { unsettled, released: released.map(releasedJob) }]),
  );
  return succeeds.map(({ job }) => byId.get(job.id));
}

/** retry / die / block, of the jobs of one batch in one statement (answers, per job, whether it moved). */
export async function finishMany(sql: StatementRunner, finishes: FinishOf[]): Promise<boolean[]> {
  const input = finishes.map(({ job, transition, result }) => ({
    id: job.id,
    tenant_id: job.tenantId,
    attempts: job.attempts,
    sources: from(transition),
    status: TRANSITIONS[transition].to,
    outcome: result.outcome,
    error_code: result.errorCode,
    next_attempt_at: result.nextAttemptAt ?? null,
  }));
  const { rows } = await sql.query<{ id: string }>(
    `WITH input AS (
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS i(id uuid, tenant_id uuid, attempts int,
           sources text[], status text, outcome text, error_code text, next_attempt_at timestamptz)
       ), moved AS (
         UPDATE jobs SET status = i.status, updated_at = now(), waiting_since = NULL,
                next_attempt_at = COALESCE(i.next_attempt_at, jobs.next_attempt_at),
                last_error_code = i.error_code, last_error_at = now(),
                completed_at = CASE WHEN i.status = 'dead' THEN now() ELSE jobs.completed_at END
         FROM input i
         WHERE jobs.id = ANY($2::uuid[]) AND jobs.id = i.id AND jobs.tenant_id = i.tenant_id
           AND jobs.status = ANY(i.sources) AND jobs.attempts = i.attempts
         RETURNING jobs.id, jobs.tenant_id, jobs.created_at, jobs.attempts, jobs.attempt_started_at
       ), attempt AS (
         ${WRITE_ATTEMPTS("i.outcome", "i.error_code")}
       )
       SELECT id FROM moved`,
    [JSON.stringify(input), finishes.map(({ job }) => job.id)],
  );
  const moved = new Set(rows.map((row) => row.id));
  return finishes.map(({ job }) => moved.has(job.id));
}

/** What succeedBatch and finishBatch run with: the process's SqlBatch, Prisma for a transaction, the outcomes port. */
export interface BatchRun {
  sql: SqlBatch;
  prisma: PrismaService;
  outcomes: JobOutcomes;
}

/** A job's columns that group its outcome, with the error code it is counted under. */
const outcomeOf = (job: ClaimedJob, errorCode: string | null): JobOutcome => ({
  tenantId: job.tenantId,
  connectionId: job.connectionId,
  operation: job.operation,
  errorCode,
});

/**
 * A batch of successes in one statement: in the SqlBatch, or, when a job of the batch had failed
 * before (a retry that passed, a replay), in a transaction with JobOutcomes.recovered of those
 * that moved.
 */
export function succeedBatch(run: BatchRun, succeeds: SucceedOf[]): Promise<(Closed | undefined)[]> {
  if (succeeds.every(({ job }) => job.lastErrorCode === null)) return succeedMany(run.sql, succeeds);
  return run.prisma.$transaction(async (tx) => {
    const closed = await succeedMany(inTransaction(tx), succeeds);
    const recovered = succeeds.flatMap(({ job }, index) =>
      closed[index] !== undefined && job.lastErrorCode !== null ? [outcomeOf(job, job.lastErrorCode)] : [],
    );
    if (recovered.length > 0) await run.outcomes.recovered(tx, recovered);
    return closed;
  });
}

/**
 * A batch of finishes in one statement: in the SqlBatch, or, when it has a die, in a transaction
 * with JobOutcomes.died of the jobs it moved to dead.
 */
export function finishBatch(run: BatchRun, finishes: FinishOf[]): Promise<boolean[]> {
  if (finishes.every(({ transition }) => transition !== "die")) return finishMany(run.sql, finishes);
  return run.prisma.$transaction(async (tx) => {
    const moved = await finishMany(inTransaction(tx), finishes);
    const dead = finishes.flatMap(({ job, transition, result }, index) =>
      moved[index] && transition === "die" ? [outcomeOf(job, result.errorCode)] : [],
    );
    if (dead.length > 0) await run.outcomes.died(tx, dead);
    return moved;
  });
}
