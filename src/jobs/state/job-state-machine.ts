// The one class that writes `jobs.status`. Each method applies one transition of
// src/jobs/state/job-states.ts in one statement whose WHERE names the transition's source statuses,
// so the database refuses a transition from any other status; a refused single-job transition is
// logged and counted (leadgate_job_transitions_refused_total), never applied.
// Its statements are plain functions of the modules beside it, which only it calls (but for
// insertJobsSql, re-exported here): run-batches.ts (claim, succeed, finish: batched), requeue.ts
// (release, resume, replay), job-statements.ts (the others), sql-fragments.ts (what they share);
// the records it takes and answers are in job-state-types.ts, re-exported here too.
// What a job's end means beyond its row (job.dead alerts) is JobOutcomes': the statements that move
// jobs to dead, and to succeeded after a failure, run in a transaction that calls it.
import { Inject, Injectable, Logger } from "@nestjs/common";
import { SqlBatch } from "../../common/sql-batch.js";
import type { TenantScope } from "../../auth/principal.js";
import { NaturalBatcher } from "../../common/natural-batcher.js";
import { PrismaService } from "../../database/prisma.service.js";
import type { Tx } from "../../database/transactions.js";
import { Metrics } from "../../observability/metrics.js";
import type { EnqueueableJob } from "../job-queue.js";
import { JOB_OUTCOMES, type JobOutcomes } from "../job-outcomes.js";
import * as statements from "./job-statements.js";
import type { ClaimedJob, NewJob, ReleasedJob, Skip, SucceedOptions } from "./job-state-types.js";
import {
  type JobStatus,
  type ReplayableStatus,
  TRANSITIONS,
  type TransitionName,
  type WaitingFor,
} from "./job-states.js";
import * as requeue from "./requeue.js";
import {
  type BatchRun,
  claimMany,
  type Closed,
  type FinishOf,
  finishBatch,
  oneStatementPerBatch,
  type SucceedOf,
  succeedBatch,
} from "./run-batches.js";

export { insertJobsSql } from "./job-statements.js";
export {
  ABANDONED_AFTER_MS,
  type AttemptOutcome,
  type ClaimedJob,
  type ConnectionNow,
  type NewJob,
  type ReleasedJob,
  type SucceedOptions,
} from "./job-state-types.js";

@Injectable()
export class JobStateMachine {
  private readonly logger = new Logger("job-state");
  /** claim's batches, by the context columns asked for. */
  private readonly claims = new Map<string, NaturalBatcher<string, ClaimedJob | undefined>>();
  private readonly succeeds = new NaturalBatcher<SucceedOf, Closed | undefined>(
    (succeeds) => succeedBatch(this.batchRun, succeeds),
    oneStatementPerBatch((succeed: SucceedOf) => succeed.job.id),
  );

  private readonly finishes = new NaturalBatcher<FinishOf, boolean>(
    (finishes) => finishBatch(this.batchRun, finishes),
    oneStatementPerBatch((finish: FinishOf) => finish.job.id),
  );

  constructor(
    private readonly prisma: PrismaService,
    private readonly sql: SqlBatch,
    private readonly metrics: Metrics,
    @Inject(JOB_OUTCOMES) private readonly outcomes: JobOutcomes,
  ) {}

  /** What the batched succeeds and finishes run with. */
  private get batchRun(): BatchRun {
    return { sql: this.sql, prisma: this.prisma, outcomes: this.outcomes };
  }

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
        (ids) => claimMany(this.sql, ids, context),
        oneStatementPerBatch((id: string) => id),
      );
      this.claims.set(context, claims);
    }
    const row = (await claims.submit(jobId)) as (ClaimedJob & Context) | undefined;
    // One row holds both: the job's columns and its receipt's and connection's.
    return row && { job: row, context: row };
  }

  /**
   * Creating a job of a connection or an alert (an event's jobs come with its receipt: insertJobsSql):
   * `queued`, with its operation's attempts, inside the caller's transaction when given. Answers the
   * jobs created, to be enqueued after the commit; a key that exists already creates nothing.
   */
  create(jobs: NewJob[], tx?: Tx): Promise<EnqueueableJob[]> {
    return statements.create(this.prisma, jobs, tx);
  }

  /** Marks a running attempt alive (so it is not taken for abandoned while it runs long). */
  async heartbeat(job: ClaimedJob): Promise<void> {
    await statements.heartbeat(this.sql, job);
  }

  /** For a job `running` now: how long until claim may take it over (undefined when it is not running). */
  async untilAbandoned(jobId: string): Promise<number | undefined> {
    return statements.untilAbandoned(this.prisma, jobId);
  }

  /**
   * retry / die / block: closes the attempt that ran and moves the job on, in one statement with
   * the other finishes of its batch (so the dead jobs of a batch count on their group alert at
   * once: run-batches.ts finishBatch). Only this run's attempt of a `running` job moves
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
    return [...closed.released, ...(await requeue.releaseDependents(this.sql, job))];
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
    const { moved, satisfied } = await statements.waitForDependency(this.prisma, job, until);
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
    return this.applied(job, transition, await statements.undoClaim(this.sql, job, transition, set, values));
  }

  /**
   * expire: jobs that have waited `maxWaitSeconds` are dead with `wait_expired` (with JobOutcomes.died,
   * in one transaction); answers how many.
   */
  async expireWaits(maxWaitSeconds: number, limit: number): Promise<number> {
    return this.prisma.$transaction(async (tx) => {
      const dead = await statements.expireWaits(tx, maxWaitSeconds, limit);
      if (dead.length > 0) await this.outcomes.died(tx, dead);
      return dead.length;
    });
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
    return requeue.releaseParked(this.prisma, graceMs, limit);
  }

  /**
   * release, by the dispatcher: jobs waiting at least `graceMs` for a dependency that succeeded (or
   * is gone) meanwhile. The dependency's `succeed` releases its dependents itself; this catches the
   * one it cannot see: a dependent that found its dependency unfinished and moved to waiting while
   * that dependency's success was committing.
   */
  async releaseSatisfiedWaits(graceMs: number, limit: number): Promise<EnqueueableJob[]> {
    return requeue.releaseSatisfiedWaits(this.prisma, graceMs, limit);
  }

  /** cancel: a disabled connection's jobs that are not running (inside the disable's transaction); answers how many. */
  async cancelConnection(tx: Tx, tenantId: string, connectionId: string): Promise<number> {
    return statements.cancelConnection(tx, tenantId, connectionId);
  }

  /** resume: a connection's held and blocked jobs back to queued (inside the resume's transaction). */
  resumeConnection(tx: Tx, tenantId: string, connectionId: string): Promise<EnqueueableJob[]> {
    return requeue.resumeConnection(tx, tenantId, connectionId);
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
    return requeue.replay(tx, scope, where, only);
  }

  /**
   * replay, for a bulk replay's next `count` pending items, in one statement: jobs still in one of
   * `only` go back to queued and their items are marked queued; the others are skipped (replayed
   * meanwhile, or running).
   */
  replayBatchStep(
    batchId: string,
    only: readonly ReplayableStatus[],
    count: number,
  ): Promise<EnqueueableJob[]> {
    return requeue.replayBatchStep(this.prisma, batchId, only, count);
  }

  /**
   * Work the dispatcher (re-)enqueues: queued, retrying and time-waiting jobs due a while ago (so
   * jobs just handed to BullMQ are not raced), and running jobs whose worker has not touched them
   * for long. A read: the claim decides.
   */
  async due(graceMs: number, staleRunningMs: number, limit: number): Promise<EnqueueableJob[]> {
    return statements.due(this.prisma, graceMs, staleRunningMs, limit);
  }

  /**
   * Ends the circuit wait of the given jobs now (their destination's circuit closed): not a
   * transition (they stay `waiting`), but their wait is over, so claim takes them; answers which.
   */
  async endCircuitWaits(jobIds: string[]): Promise<EnqueueableJob[]> {
    return statements.endCircuitWaits(this.prisma, jobIds);
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
