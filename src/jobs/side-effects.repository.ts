import { Injectable } from "@nestjs/common";
import { SqlBatch } from "../common/sql-batch.js";
import type { SideEffectStatus } from "./operations.js";
import type { ClaimedJob } from "./state/job-state-machine.js";

/** A side-effect record an earlier run left: its status and what it stored it would send. */
interface Earlier<Request> {
  status: SideEffectStatus;
  request: Request | null;
}

/**
 * Local operation records: written under the job key *before* an external call, so a re-run can
 * tell "never tried" from "tried, outcome unknown" (reconcile at the destination first) and "done".
 */
@Injectable()
export class SideEffectsRepository {
  constructor(private readonly sql: SqlBatch) {}

  /**
   * Records the start of the effect, with what it is about to send (`request`, when the effect
   * decides that at run time: the first reply's rendered text); answers what an earlier run left,
   * if anything, and the request that run stored, which a run after an unknown outcome sends (and
   * looks for) instead. One statement (Prisma's createMany would be BEGIN, INSERT, COMMIT): the
   * insert, or the record it found.
   */
  async begin<Request extends object>(
    job: ClaimedJob,
    request?: Request,
  ): Promise<{ earlier: SideEffectStatus | undefined; request: Request | undefined }> {
    const { rows } = await this.sql.query<{ inserted: boolean } & Partial<Earlier<Request>>>(
      `WITH inserted AS (
         INSERT INTO side_effects (tenant_id, job_key, operation, status, request)
         VALUES ($1::uuid, $2, $3, 'started', $4::jsonb)
         ON CONFLICT (job_key) DO NOTHING RETURNING 1
       )
       SELECT EXISTS (SELECT 1 FROM inserted) AS inserted, s.status, s.request
       FROM (SELECT 1) one LEFT JOIN side_effects s ON s.job_key = $2 AND s.tenant_id = $1::uuid`,
      [job.tenantId, job.jobKey, job.operation, request === undefined ? null : JSON.stringify(request)],
    );
    const row = rows[0]!;
    if (row.inserted) return { earlier: undefined, request };
    // A record committed by a concurrent run while this statement waited is not in its snapshot.
    const earlier = row.status ? (row as Earlier<Request>) : await this.earlier<Request>(job);
    return { earlier: earlier.status, request: earlier.request ?? request };
  }

  /**
   * The text a reply side effect stored before its call (`{ text }` of the first reply) and when it
   * was recorded, unless it was skipped (nothing sent); null when there is none.
   */
  async sentText(tenantId: string, jobKey: string): Promise<{ text: string; at: Date } | null> {
    const { rows } = await this.sql.query<{ text: string | null; at: Date }>(
      `SELECT request->>'text' AS text, created_at AS at FROM side_effects
       WHERE job_key = $1 AND tenant_id = $2::uuid AND status <> 'skipped'`,
      [jobKey, tenantId],
    );
    const row = rows[0];
    return row?.text ? { text: row.text, at: row.at } : null;
  }

  private async earlier<Request>(job: ClaimedJob): Promise<Earlier<Request>> {
    const { rows } = await this.sql.query<Earlier<Request>>(
      "SELECT status, request FROM side_effects WHERE job_key = $1 AND tenant_id = $2::uuid",
      [job.jobKey, job.tenantId],
    );
    return rows[0]!;
  }

  async finish(
    job: ClaimedJob,
    status: Exclude<SideEffectStatus, "started">,
    externalRef?: string,
  ): Promise<void> {
    await this.sql.query(
      `UPDATE side_effects SET status = $3, external_ref = $4, updated_at = now()
       WHERE job_key = $1 AND tenant_id = $2::uuid`,
      [job.jobKey, job.tenantId, status, externalRef ?? null],
    );
  }
}
