// The one module that writes `jobs.status`. Each method applies one transition of
// src/jobs/state/job-states.ts in one statement whose WHERE names the transition's source statuses,
// so the database refuses a transition from any other status; a refused single-job transition is
// logged and counted (leadgate_job_transitions_refused_total), never applied.
import { Injectable, Logger } from "@nestjs/common";
import { SqlBatch } from "../../common/sql-batch.js";
import { type TenantScope, tenantParam } from "../../auth/principal.js";
import { NaturalBatcher } from "../../common/natural-batcher.js";
import { PrismaService } from "../../database/prisma.service.js";
import type { Tx } from "../../database/transactions.js";
import { Metrics } from "../../observability/metrics.js";
import type { EnqueueableJob } from "../job-queue.js";
import { dependentsOf, type Operation, OPERATION_SETTINGS, type SideEffectStatus } from "../operations.js";
import {
  type JobStatus,
  sourceStatuses,
  TRANSITIONS,
  type TransitionName,
  type WaitingFor,
} from "./job-states.js";

/** A running job whose worker has not said it is alive for this long counts as abandoned (claim may take it over). */
export const ABANDONED_AFTER_MS = 30_000;

export interface ClaimedJob {
  id: string;
  tenantId: string;
  connectionId: string | null;
  receiptId: string | null;
  alertId: string | null;
  operation: Operation;
  jobKey: string;
  attempts: number;
  maxAttempts: number;
  /** When this attempt began (jobs.attempt_started_at): its attempt row is written when it ends. */
  startedAt: Date;
  /**
   * The status of the job of the same receipt this one runs after (OperationSettings.after), null
   * when it has none (or it is gone): anything but `succeeded` means wait.
   */
  dependencyStatus: JobStatus | null;
  /** What the side-effect record under the job key said when the job was claimed (null: none). */
  sideEffect: SideEffectStatus | null;
}

/** How an attempt that ran ended (the attempt row's outcome). */
export type AttemptOutcome = "succeeded" | "retryable" | "permanent" | "credential";

/** The transitions that close an attempt that ran (it counts). */
type Finish = Extract<TransitionName, "succeed" | "retry" | "die" | "block">;
/** The transitions that undo the claim: the job did not run and used no attempt. */
type Skip = Extract<TransitionName, "hold" | "park" | "cancelRun">;

/** The operation each operation runs after, as a jsonb parameter (`$n::jsonb ->> operation`: null for none). */
const AFTER = JSON.stringify(
  Object.fromEntries(
    Object.entries(OPERATION_SETTINGS).map(([op, settings]) => [op, settings.after ?? null]),
  ),
);

/** How many jobs a single-job transition moved (1, or 0 when the database refused it). */
interface Moved {
  moved: number;
}

/** A transition's source statuses: the `status = ANY($n::text[])` parameter of its statement. */
const from = sourceStatuses;

/** Attempts a requeued job gets, per operation (requeuedMaxAttempts in SQL: attempts + allowance). */
const ALLOWANCES = JSON.stringify(
  Object.fromEntries(Object.entries(OPERATION_SETTINGS).map(([op, settings]) => [op, settings.attempts])),
);
/** A requeue's columns but its status. */
const REQUEUE_COLUMNS = (allowancesParam: string) => `waiting_for = NULL, waiting_since = NULL,
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

/** The status of the side-effect record under the key of the job `alias` (an SQL expression). */
const SIDE_EFFECT_OF = (alias: string) =>
  `(SELECT s.status FROM side_effects s WHERE s.job_key = ${alias}.job_key AND s.tenant_id = ${alias}.tenant_id)`;

/**
 * The columns of the connection of the job `alias` that may change while a job runs (ContextRow's
 * names), as they are now: a job claimed by its dependency's success runs with them (an SQL expression).
 */
const CONNECTION_NOW = (
  alias: string,
) => `(SELECT json_build_object('status', c.status, 'settings', c.settings,
    'credentials', c.credentials, 'crm_signing_secret', c.crm_signing_secret,
    'previous_crm_signing_secret', CASE WHEN c.previous_crm_signing_secret_expire_at > now()
                                        THEN c.previous_crm_signing_secret END)
  FROM connections c WHERE c.id = ${alias}.connection_id AND c.tenant_id = ${alias}.tenant_id)`;

/** An attempt's duration until now, from its start (an SQL expression). */
const DURATION_MS = (startedAt: string) => `(extract(epoch FROM now() - ${startedAt}) * 1000)::int`;

/**
 * Writes the attempt rows of the jobs a batch statement moved (CTEs `input` i and `moved` m, with
 * id, tenant_id, attempts and attempt_started_at), ended now with `outcome` and `errorCode` (SQL
 * expressions over i). A row of the same number that an earlier version opened at its claim is closed.
 */
const WRITE_ATTEMPTS = (outcome: string, errorCode: string) => `INSERT INTO job_attempts AS a
    (tenant_id, job_id, number, started_at, finished_at, outcome, error_code, duration_ms)
  SELECT m.tenant_id, m.id, m.attempts, m.attempt_started_at, now(), ${outcome}, ${errorCode},
         ${DURATION_MS("m.attempt_started_at")}
  FROM input i JOIN moved m ON m.id = i.id
  ON CONFLICT (job_id, number) DO UPDATE SET finished_at = excluded.finished_at, outcome = excluded.outcome,
    error_code = excluded.error_code, duration_ms = ${DURATION_MS("a.started_at")}`;

/** A retry, die or block of a job that ran: how its attempt ended. */
interface FinishOf {
  job: ClaimedJob;
  transition: Exclude<Finish, "succeed">;
  result: { outcome: AttemptOutcome; errorCode: string; nextAttemptAt?: Date };
}

/**
 * A job a succeed released: to be enqueued, or, when the succeed was asked to claim what it
 * releases, already claimed for its first attempt here (`claimed`, as claim answers it).
 */
export interface ReleasedJob extends EnqueueableJob {
  claimed?: ClaimedJob;
  /** With `claimed`: its connection's status, settings and secrets as the claim read them (ContextRow's columns). */
  connection?: ConnectionNow;
}

/** The connection columns a release-and-claim reads anew (CONNECTION_NOW). */
export interface ConnectionNow {
  status: string;
  settings: unknown;
  credentials: string | null;
  crm_signing_secret: string | null;
  previous_crm_signing_secret: string | null;
}

/** What a succeed did besides moving the job: the dependents it released, and whether one may still be on its way to waiting. */
interface Closed {
  released: ReleasedJob[];
  unsettled: boolean;
}

/**
 * How a succeed goes beyond moving the job: whether the jobs it releases are claimed by the same
 * statement (they run in this process), and whether it writes the job's side-effect record
 * `succeeded` (Processor.recordsSuccess).
 */
export interface SucceedOptions {
  claimReleased?: boolean;
  record?: boolean;
}

interface SucceedOf {
  job: ClaimedJob;
  options: SucceedOptions;
}

/**
 * Claims and successes of concurrently running jobs go to Postgres in one statement per batch
 * (natural batching: no timer; the statement itself rides in the process's SqlBatch); a job is in a
 * batch at most once, two batches may be in flight.
 */
function oneStatementPerBatch<Item>(idOf: (item: Item) => string) {
  return {
    maxBatch: 100,
    maxInFlight: 2,
    admit: () => {
      const seen = new Set<string>();
      return (item: Item) => !seen.has(idOf(item)) && Boolean(seen.add(idOf(item)));
    },
  };
}

/**
 * A job of a connection or an alert (OperationSettings.scope), created `queued` by `create`. Its key
 * is the caller's (jobKey): the same key never makes a second job.
 */
export interface NewJob {
  tenantId: string;
  connectionId: string | null;
  alertId?: string | null;
  operation: Operation;
  jobKey: string;
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

@Injectable()
export class JobStateMachine {
  private readonly logger = new Logger("job-state");
  /** claim's batches, by the context columns asked for. */
  private readonly claims = new Map<string, NaturalBatcher<string, ClaimedJob | undefined>>();
  private readonly succeeds = new NaturalBatcher<SucceedOf, Closed | undefined>(
    (succeeds) => this.succeedMany(succeeds),
    oneStatementPerBatch((succeed: SucceedOf) => succeed.job.id),
  );

  private readonly finishes = new NaturalBatcher<FinishOf, boolean>(
    (finishes) => this.finishMany(finishes),
    oneStatementPerBatch((finish: FinishOf) => finish.job.id),
  );

  constructor(
    private readonly prisma: PrismaService,
    private readonly sql: SqlBatch,
    private readonly metrics: Metrics,
  ) {}

  /**
   * claim: takes a job for one attempt (its row is written when it ends; a run taken over as
   * abandoned gets its row now, as `abandoned`) and returns the job with `context` columns of its
   * receipt and connection, in one statement.
   * Only a job still to do is taken: queued, retrying, waiting whose time-based wait is over, or
   * running when its worker stopped renewing it. A finished, held, blocked or cancelled job, or
   * one another worker runs, is left alone: a duplicate BullMQ delivery or a stale re-enqueue is
   * harmless. `context` is a SELECT list over `r` (receipts) and `c` (connections).
   */
  async claim<Context>(
    jobId: string,
    context: string,
  ): Promise<{ job: ClaimedJob; context: Context } | undefined> {
    let claims = this.claims.get(context);
    if (!claims) {
      claims = new NaturalBatcher(
        (ids) => this.claimMany(ids, context),
        oneStatementPerBatch((id: string) => id),
      );
      this.claims.set(context, claims);
    }
    const row = (await claims.submit(jobId)) as (ClaimedJob & Context) | undefined;
    // One row holds both: the job's columns and its receipt's and connection's.
    return row && { job: row, context: row };
  }

  /** claim, of the jobs of one batch in one statement (answers, per id, the claimed job or undefined). */
  private async claimMany(jobIds: string[], context: string): Promise<(ClaimedJob | undefined)[]> {
    const { rows } = await this.sql.query<ClaimedJob>(
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
         INSERT INTO job_attempts AS a (tenant_id, job_id, number, started_at, finished_at, outcome, duration_ms)
         SELECT job.tenant_id, job.id, job.attempts - 1, COALESCE(l.attempt_started_at, now()), now(), 'abandoned',
                ${DURATION_MS("COALESCE(l.attempt_started_at, now())")}
         FROM job JOIN locked l ON l.id = job.id WHERE l.status = 'running'
         ON CONFLICT (job_id, number) DO UPDATE SET finished_at = now(), outcome = 'abandoned',
           duration_ms = ${DURATION_MS("a.started_at")}
         WHERE a.finished_at IS NULL
       )
       SELECT job.id, job.tenant_id AS "tenantId", job.connection_id AS "connectionId", job.receipt_id AS "receiptId",
              job.alert_id AS "alertId", job.operation, job.job_key AS "jobKey", job.attempts, job.max_attempts AS "maxAttempts",
              job.attempt_started_at AS "startedAt",
              (SELECT d.status FROM jobs d WHERE d.receipt_id = job.receipt_id AND d.tenant_id = job.tenant_id
                 AND d.operation = ($4::jsonb ->> job.operation)) AS "dependencyStatus",
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
   * Creating a job of a connection or an alert (an event's jobs come with its receipt: insertJobsSql):
   * `queued`, with its operation's attempts, inside the caller's transaction when given. Answers the
   * jobs created, to be enqueued after the commit; a key that exists already creates nothing.
   */
  create(jobs: NewJob[], tx?: Tx): Promise<EnqueueableJob[]> {
    if (jobs.length === 0) return Promise.resolve([]);
    const db = tx ?? this.prisma;
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

  /** Marks a running attempt alive (so it is not taken for abandoned while it runs long). */
  async heartbeat(job: ClaimedJob): Promise<void> {
    await this.sql.query(
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

  /**
   * retry / die / block: closes the attempt that ran and moves the job on, in one statement with
   * the other finishes of its batch (so the dead jobs of a batch count on their group alert at
   * once: the statement trigger jobs_alerts). Only this run's attempt of a `running` job moves
   * (`attempts` matches); the attempt row changes only with it, so a late finish of a run taken
   * over as abandoned changes nothing.
   */
  async finish(
    job: ClaimedJob,
    transition: FinishOf["transition"],
    result: FinishOf["result"],
  ): Promise<boolean> {
    return this.applied(job, transition, (await this.finishes.submit({ job, transition, result })) ? 1 : 0);
  }

  /**
   * succeed, as `finish`; in the same statement, release: the jobs of its receipt that wait for it
   * (OPERATION_SETTINGS.after) go to queued. Answers them, to be enqueued (undefined: refused).
   * With `claimReleased`, release and claim are one update of the same statement: the released jobs
   * go straight to running, as claim would leave them (each carries `claimed`), for the caller to
   * run at once (a CRM delivery in the process that ran its lead-upsert: one row version and one
   * statement fewer than a release and a claim). With `record`, the job's side-effect record says
   * `succeeded` once the statement commits.
   *
   * A dependent that was queued or running when this statement began may be moving to waiting
   * right now (waitForDependency), unseen by this statement: then one more release runs after it.
   * Its wait cannot slip past that one: the wait reads this job's status under a share lock, so it
   * either sees `succeeded` (and runs instead) or holds this job's row until the wait is committed.
   */
  async succeed(job: ClaimedJob, options: SucceedOptions = {}): Promise<ReleasedJob[] | undefined> {
    const closed = await this.succeeds.submit({ job, options });
    if (!this.applied(job, "succeed", closed ? 1 : 0) || !closed) return undefined;
    if (!closed.unsettled) return closed.released;
    return [...closed.released, ...(await this.releaseDependents(job))];
  }

  /** succeed (and release, or release and claim), of the jobs of one batch in one statement. */
  private async succeedMany(succeeds: SucceedOf[]): Promise<(Closed | undefined)[]> {
    const input = succeeds.map(({ job, options }) => ({
      id: job.id,
      tenant_id: job.tenantId,
      attempts: job.attempts,
      dependents: job.receiptId !== null ? dependentsOf(job.operation) : [],
      claim: options.claimReleased === true,
      record: options.record === true,
    }));
    const { rows } = await this.sql.query<{ id: string; unsettled: boolean; released: ReleasedRow[] }>(
      `WITH input AS (
         SELECT * FROM jsonb_to_recordset($1::jsonb)
           AS i(id uuid, tenant_id uuid, attempts int, dependents text[], claim boolean, record boolean)
       ), moved AS (
         UPDATE jobs SET status = 'succeeded', updated_at = now(), waiting_since = NULL, completed_at = now()
         FROM input i
         WHERE jobs.id = ANY($5::uuid[]) AND jobs.id = i.id AND jobs.tenant_id = i.tenant_id
           AND jobs.status = ANY($2::text[]) AND jobs.attempts = i.attempts
         RETURNING jobs.id, jobs.tenant_id, jobs.receipt_id, jobs.job_key, jobs.operation, jobs.attempts,
                   jobs.attempt_started_at, i.dependents, i.claim, i.record
       ), attempt AS (
         ${WRITE_ATTEMPTS("'succeeded'", "NULL")}
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
         -- The ids first, read off the receipt index (whatever the planner believes of the statuses).
         WHERE jobs.id = ANY(ARRAY(SELECT d.id FROM moved dm JOIN jobs d
                                     ON d.receipt_id = dm.receipt_id AND d.tenant_id = dm.tenant_id))
           AND jobs.tenant_id = m.tenant_id AND jobs.receipt_id = m.receipt_id AND jobs.operation = ANY(m.dependents)
           AND jobs.status = ANY($3::text[]) AND jobs.waiting_for = 'dependency'
         RETURNING jobs.*, m.id AS "releasedBy"
       )
       SELECT m.id,
              COALESCE((SELECT json_agg(json_build_object('id', r.id, 'tenantId', r.tenant_id,
                          'connectionId', r.connection_id, 'receiptId', r.receipt_id, 'alertId', r.alert_id,
                          'operation', r.operation, 'jobKey', r.job_key, 'attempts', r.attempts,
                          'maxAttempts', r.max_attempts,
                          'startedAt', CASE WHEN r.status = 'running' THEN r.attempt_started_at END,
                          'sideEffect', ${SIDE_EFFECT_OF("r")}, 'connection', ${CONNECTION_NOW("r")}))
                        FROM released r WHERE r."releasedBy" = m.id), '[]'::json) AS released,
              EXISTS (SELECT 1 FROM jobs d WHERE d.tenant_id = m.tenant_id AND d.receipt_id = m.receipt_id
                        AND d.operation = ANY(m.dependents) AND d.status IN ('queued', 'retrying', 'running')) AS unsettled
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
  private async finishMany(finishes: FinishOf[]): Promise<boolean[]> {
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
    const { rows } = await this.sql.query<{ id: string }>(
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
         RETURNING jobs.id, jobs.tenant_id, jobs.attempts, jobs.attempt_started_at
       ), attempt AS (
         ${WRITE_ATTEMPTS("i.outcome", "i.error_code")}
       )
       SELECT id FROM moved`,
      [JSON.stringify(input), finishes.map(({ job }) => job.id)],
    );
    const moved = new Set(rows.map((row) => row.id));
    return finishes.map(({ job }) => moved.has(job.id));
  }

  /** release: the jobs of `job`'s receipt that wait for it (see succeed). */
  private async releaseDependents(job: ClaimedJob): Promise<EnqueueableJob[]> {
    const { rows } = await this.sql.query<EnqueueableJob>(
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

  /**
   * hold / park / cancelRun: the job cannot run now (its connection is paused, has a credential
   * problem, or is disabled). The claim is undone and no attempt is counted.
   */
  skip(job: ClaimedJob, transition: Skip): Promise<boolean> {
    return this.undoClaim(
      job,
      transition,
      "status = $5, completed_at = CASE WHEN $5 = 'cancelled' THEN now() ELSE completed_at END",
      [TRANSITIONS[transition].to],
    );
  }

  /**
   * wait: the job may not run yet (`reason`). A time-based wait (quota, circuit) runs again at
   * `until`; a `dependency` wait is claimed only once released (its dependency's `succeed`, or the
   * dispatcher's releaseSatisfiedWaits). The claim is undone, so the wait uses no attempt; the wait's
   * start is kept across repeated waits, and bounds it (expireWaits).
   */
  wait(job: ClaimedJob, reason: WaitingFor, until: Date): Promise<boolean> {
    return this.undoClaim(
      job,
      "wait",
      "status = 'waiting', waiting_for = $5, waiting_since = COALESCE(waiting_since, now()), next_attempt_at = $6",
      [reason, until],
    );
  }

  /**
   * wait, for a job claimed before the job it runs after succeeded (a resume or replay queued both):
   * applied only while that job has still not succeeded, read under a share lock (see succeed).
   * Answers whether it waits; false with `satisfied`: the dependency succeeded meanwhile, run now.
   */
  async waitForDependency(job: ClaimedJob, until: Date): Promise<{ waiting: boolean; satisfied: boolean }> {
    const { rows } = await this.prisma.pool.query<Moved & { satisfied: boolean }>(
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
    if (satisfied) return { waiting: false, satisfied: true };
    return { waiting: this.applied(job, "wait", moved), satisfied: false };
  }

  /**
   * A transition that takes back this run's claim (attempts - 1: the attempt is not written)
   * and sets `set` (parameters from $5).
   */
  private async undoClaim(
    job: ClaimedJob,
    transition: Skip | "wait",
    set: string,
    values: unknown[],
  ): Promise<boolean> {
    const { rows } = await this.sql.query<Moved>(
      `WITH moved AS (
         UPDATE jobs SET ${set}, attempts = attempts - 1, updated_at = now()
         WHERE id = $1::uuid AND tenant_id = $2::uuid AND status = ANY($4::text[]) AND attempts = $3
         RETURNING id
       )
       SELECT count(*)::int AS moved FROM moved`,
      [job.id, job.tenantId, job.attempts, from(transition), ...values],
    );
    return this.applied(job, transition, rows[0]?.moved);
  }

  /** expire: jobs that have waited `maxWaitSeconds` are dead with `wait_expired`; answers how many. */
  async expireWaits(maxWaitSeconds: number, limit: number): Promise<number> {
    const { rowCount } = await this.prisma.pool.query(
      `UPDATE jobs SET status = 'dead', waiting_for = NULL, last_error_code = 'wait_expired',
              last_error_at = now(), completed_at = now(), updated_at = now()
       WHERE id IN (SELECT id FROM jobs WHERE status = 'waiting'
                      AND waiting_since <= now() - make_interval(secs => $1) LIMIT $2)
         AND status = ANY($3::text[])`,
      [maxWaitSeconds, limit, from("expire")],
    );
    return rowCount ?? 0;
  }

  /**
   * release: held and blocked jobs whose connection is active go back to queued. Resume does
   * this for the jobs it sees; this catches the ones it could not: a delivery that read the
   * connection as paused and committed after the resume, or a worker that held or parked a job
   * just after it. (A blocked job of an active connection exists only through such a race: a
   * credential failure marks the connection before it blocks the job, and the grace period covers
   * the moment between.)
   */
  async releaseParked(graceMs: number, limit: number): Promise<EnqueueableJob[]> {
    const { rows } = await this.prisma.pool.query<EnqueueableJob>(
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

  /**
   * release, by the dispatcher: jobs waiting at least `graceMs` for a dependency that succeeded (or
   * is gone) meanwhile. The dependency's `succeed` releases its dependents itself; this catches the
   * one it cannot see: a dependent that found its dependency unfinished and moved to waiting while
   * that dependency's success was committing.
   */
  async releaseSatisfiedWaits(graceMs: number, limit: number): Promise<EnqueueableJob[]> {
    const { rows } = await this.prisma.pool.query<EnqueueableJob>(
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

  /** cancel: a disabled connection's jobs that are not running (inside the disable's transaction); answers how many. */
  async cancelConnection(tx: Tx, tenantId: string, connectionId: string): Promise<number> {
    return tx.$executeRawUnsafe(
      `UPDATE jobs SET status = 'cancelled', waiting_for = NULL, completed_at = now(), updated_at = now()
       WHERE tenant_id = $1::uuid AND connection_id = $2::uuid AND status = ANY($3::text[])`,
      tenantId,
      connectionId,
      from("cancel"),
    );
  }

  /** resume: a connection's held and blocked jobs back to queued (inside the resume's transaction). */
  resumeConnection(tx: Tx, tenantId: string, connectionId: string): Promise<EnqueueableJob[]> {
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
   * replay: the scope's given jobs (by ids or receipt) whose status is in `only` (narrowed from
   * the replay's source statuses) back to queued under the same job key; answers those it moved.
   */
  replay(
    tx: Tx,
    scope: TenantScope,
    where: { jobIds?: string[]; receiptId?: string },
    only: readonly JobStatus[],
  ): Promise<EnqueueableJob[]> {
    return tx.$queryRawUnsafe<EnqueueableJob[]>(
      `UPDATE jobs SET ${REQUEUE_SET("$5")}
       WHERE ($1::uuid IS NULL OR tenant_id = $1::uuid)
         AND ($2::uuid[] IS NULL OR id = ANY($2::uuid[]))
         AND ($3::uuid IS NULL OR receipt_id = $3::uuid)
         AND status = ANY($4::text[])
       RETURNING id, job_key AS "jobKey", operation`,
      tenantParam(scope),
      where.jobIds ?? null,
      where.receiptId ?? null,
      from("replay", only),
      ALLOWANCES,
    );
  }

  /**
   * replay, for a bulk replay's next `count` pending items, in one statement: jobs still in one of
   * `only` go back to queued and their items are marked queued; the others are skipped (replayed
   * meanwhile, or running).
   */
  replayBatchStep(batchId: string, only: readonly JobStatus[], count: number): Promise<EnqueueableJob[]> {
    return this.prisma.$queryRawUnsafe<EnqueueableJob[]>(
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

  /**
   * Work the dispatcher (re-)enqueues: queued, retrying and time-waiting jobs due a while ago (so
   * jobs just handed to BullMQ are not raced), and running jobs whose worker has not touched them
   * for long. A read: the claim decides.
   */
  async due(graceMs: number, staleRunningMs: number, limit: number): Promise<EnqueueableJob[]> {
    const { rows } = await this.prisma.pool.query<EnqueueableJob>(
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

  /**
   * Ends the circuit wait of the given jobs now (their destination's circuit closed): not a
   * transition (they stay `waiting`), but their wait is over, so claim takes them; answers which.
   */
  async endCircuitWaits(jobIds: string[]): Promise<EnqueueableJob[]> {
    const { rows } = await this.prisma.pool.query<EnqueueableJob>(
      `UPDATE jobs SET next_attempt_at = now(), updated_at = now()
       WHERE id = ANY($1::uuid[]) AND status = 'waiting' AND waiting_for = 'circuit'
       RETURNING id, job_key AS "jobKey", operation`,
      [jobIds],
    );
    return rows;
  }

  /** Reports a single-job transition the database refused (the job was not in a source status). */
  private applied(job: ClaimedJob, transition: TransitionName, moved: number | undefined): boolean {
    if (moved === 1) return true;
    this.metrics.refusedTransitions.inc({ transition });
    this.logger.warn({
      msg: "job transition refused: the job is no longer in a status it may start from",
      jobId: job.id,
      jobKey: job.jobKey,
      transition,
      from: TRANSITIONS[transition].from,
    });
    return false;
  }
}
