// The runs of POST /admin/connections/{id}/sync (api.md `/sync` row): each run is a row naming its
// registration and reconciliation jobs, and its status is theirs (no one writes it): `queued` until
// either starts, `running` until both ended, then finished. Every method runs in the caller's
// transaction, after it locked the connection's row: that lock serializes the calls of one
// connection, so the database decides which call makes the run and which join it.
import { Injectable } from "@nestjs/common";
import type { Tx } from "../database/transactions.js";

/** Runs this route starts per connection in any window of RATE_WINDOW_SECONDS (api.md: 6 in 60 s). */
export const RUNS_PER_WINDOW = 6;
export const RATE_WINDOW_SECONDS = 60;

export interface OpenRun {
  id: string;
  status: "queued" | "running";
}

@Injectable()
export class SyncRuns {
  /**
   * The connection's newest run, unless both its jobs ended (succeeded, dead, cancelled). A held
   * or blocked job has not: it runs once the connection is resumed, and its run waits with it.
   * Served by sync_runs (tenant_id, connection_id, created_at DESC) and the jobs' primary key.
   */
  async open(tx: Tx, tenantId: string, connectionId: string): Promise<OpenRun | undefined> {
    const rows = await tx.$queryRaw<{ id: string; finished: boolean; started: boolean }[]>`
      SELECT r.id,
             COALESCE(bool_and(j.status IN ('succeeded', 'dead', 'cancelled')), true) AS finished,
             COALESCE(bool_or(j.status = 'running' OR j.attempts > 0), false) AS started
      FROM (SELECT id, tenant_id, registration_job_id, reconciliation_job_id FROM sync_runs
            WHERE tenant_id = ${tenantId}::uuid AND connection_id = ${connectionId}::uuid
            ORDER BY created_at DESC LIMIT 1) r
      LEFT JOIN jobs j ON j.tenant_id = r.tenant_id AND j.id IN (r.registration_job_id, r.reconciliation_job_id)
      GROUP BY r.id`;
    const run = rows[0];
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

  async create(
    tx: Tx,
    run: {
      id: string;
      tenantId: string;
      connectionId: string;
      apiKeyId: string | null;
      registrationJobId: string | null;
      reconciliationJobId: string | null;
    },
  ): Promise<void> {
    await tx.syncRun.create({ data: run });
  }
}
