// The runs of POST /admin/connections/{id}/sync (api.md `/sync` row): each run is a row naming its
// registration and reconciliation jobs, and its status is theirs (no one writes it): `queued` until
// either starts, `running` until both ended, then finished. A follow-up run (a call while a run was
// running) names the run it follows and no jobs yet: it is `queued` until that run ended and its
// jobs are made (SyncRunFollowUps, src/reconciliation/). Every method but `waiting` runs in the
// caller's transaction, after it locked the connection's row: that lock serializes the calls of one
// connection and the start of its follow-up, so the database decides which call makes a run and
// which join it.
import { Injectable } from "@nestjs/common";
import type { Tx } from "../database/transactions.js";
import { TERMINAL } from "../jobs/state/job-states.js";

/** Runs this route starts per connection in any window of RATE_WINDOW_SECONDS (api.md: 6 in 60 s). */
export const RUNS_PER_WINDOW = 6;
export const RATE_WINDOW_SECONDS = 60;

export interface OpenRun {
  id: string;
  status: "queued" | "running";
}

/** A follow-up run whose jobs are not made yet. */
export interface WaitingRun {
  id: string;
  tenantId: string;
  connectionId: string;
}

/** The jobs a run names (null: none of that kind, or none made yet). */
export interface RunJobs {
  registrationJobId: string | null;
  reconciliationJobId: string | null;
}

/** What can read: a transaction, or the client itself (the sweep's read). */
type Reader = Pick<Tx, "$queryRaw">;

@Injectable()
export class SyncRuns {
  /**
   * The connection's newest run, unless both its jobs ended (succeeded, dead, cancelled). A held
   * or blocked job has not: it runs once the connection is resumed, and its run waits with it. A
   * follow-up whose jobs are not made yet is queued. Served by sync_runs (tenant_id,
   * connection_id, created_at DESC) and the jobs' primary key.
   */
  async open(tx: Tx, tenantId: string, connectionId: string): Promise<OpenRun | undefined> {
    const rows = await tx.$queryRaw<{ id: string; waiting: boolean; finished: boolean; started: boolean }[]>`
      SELECT r.id, r.waiting,
             COALESCE(bool_and(j.status = ANY(${TERMINAL}::text[])), true) AS finished,
             COALESCE(bool_or(j.status = 'running' OR j.attempts > 0), false) AS started
      FROM (SELECT id, tenant_id, registration_job_id, reconciliation_job_id,
                   follows_run_id IS NOT NULL AND reconciliation_job_id IS NULL AS waiting
            FROM sync_runs
            WHERE tenant_id = ${tenantId}::uuid AND connection_id = ${connectionId}::uuid
            ORDER BY created_at DESC LIMIT 1) r
      LEFT JOIN jobs j ON j.tenant_id = r.tenant_id AND j.id IN (r.registration_job_id, r.reconciliation_job_id)
      GROUP BY r.id, r.waiting`;
    const run = rows[0];
    if (run?.waiting) return { id: run.id, status: "queued" };
    if (!run || run.finished) return undefined;
    return { id: run.id, status: run.started ? "running" : "queued" };
  }

  /**
   * Seconds until the connection may start another run, when RUNS_PER_WINDOW runs started in the
   * last RATE_WINDOW_SECONDS (the oldest of those must leave the window first); else undefined.
   */
  async retryAfter(tx: Tx, tenantId: string, connectionId: string): Promise<number | undefined> {
    const rows = await tx.$queryRaw<{ seconds: number }[]>`
      SELECT ceil(extract(epoch FROM created_at + ${RATE_WINDOW_SECONDS}::int * interval '1 second' - now()))::int AS seconds
      FROM sync_runs
      WHERE tenant_id = ${tenantId}::uuid AND connection_id = ${connectionId}::uuid
        AND created_at > now() - ${RATE_WINDOW_SECONDS}::int * interval '1 second'
      ORDER BY created_at DESC OFFSET ${RUNS_PER_WINDOW - 1}::int LIMIT 1`;
    const row = rows[0];
    return row === undefined ? undefined : Math.min(RATE_WINDOW_SECONDS, Math.max(1, row.seconds));
  }

  /** A run with its jobs, or a follow-up of `followsRunId` without them (its jobs are made when that one ended). */
  async create(
    tx: Tx,
    run: RunJobs & {
      id: string;
      tenantId: string;
      connectionId: string;
      apiKeyId: string | null;
      followsRunId: string | null;
    },
  ): Promise<void> {
    await tx.syncRun.create({ data: run });
  }

  /**
   * Follow-ups whose jobs are not made yet and whose run has ended (every job of it succeeded, dead
   * or cancelled), oldest first: every tenant's (the sweep), or only `run` (the start's check under
   * the connection's lock). Served by sync_runs_waiting_idx and the jobs' primary key.
   */
  async waiting(db: Reader, limit: number, run?: WaitingRun): Promise<WaitingRun[]> {
    const id = run?.id ?? null;
    return db.$queryRaw<WaitingRun[]>`
      SELECT r.id, r.tenant_id AS "tenantId", r.connection_id AS "connectionId"
      FROM sync_runs r
      WHERE r.follows_run_id IS NOT NULL AND r.reconciliation_job_id IS NULL
        AND (${id}::uuid IS NULL OR r.id = ${id}::uuid)
        AND NOT EXISTS (
          SELECT 1 FROM sync_runs p
          JOIN jobs j ON j.tenant_id = p.tenant_id AND j.id IN (p.registration_job_id, p.reconciliation_job_id)
          WHERE p.id = r.follows_run_id AND p.tenant_id = r.tenant_id AND j.status <> ALL(${TERMINAL}::text[]))
      ORDER BY r.created_at
      LIMIT ${limit}::int`;
  }

  /** A follow-up's jobs, made now: it is a run like any other from here on. */
  async started(tx: Tx, run: WaitingRun, jobs: RunJobs): Promise<void> {
    await tx.$executeRaw`
      UPDATE sync_runs
      SET registration_job_id = ${jobs.registrationJobId}::uuid, reconciliation_job_id = ${jobs.reconciliationJobId}::uuid
      WHERE tenant_id = ${run.tenantId}::uuid AND id = ${run.id}::uuid AND reconciliation_job_id IS NULL`;
  }
}
