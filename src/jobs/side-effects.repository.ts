import { Injectable } from "@nestjs/common";
import { SqlBatch } from "../common/sql-batch.js";
import type { SideEffectStatus } from "./operations.js";
import type { ClaimedJob } from "./state/job-state-machine.js";

/**
 * Local operation records: written under the job key *before* an external call, so a re-run can
 * tell "never tried" from "tried, outcome unknown" (reconcile at the destination first) and "done".
 */
@Injectable()
export class SideEffectsRepository {
  constructor(private readonly sql: SqlBatch) {}

  /**
   * Records the start of the effect; answers what an earlier run left, if anything. One statement
   * (Prisma's createMany would be BEGIN, INSERT, COMMIT): the insert, or the record it found.
   */
  async begin(job: ClaimedJob): Promise<{ earlier: SideEffectStatus | undefined }> {
    const { rows } = await this.sql.query<{ inserted: boolean; earlier: SideEffectStatus | null }>(
      `WITH inserted AS (
         INSERT INTO side_effects (tenant_id, job_key, operation, status) VALUES ($1::uuid, $2, $3, 'started')
         ON CONFLICT (job_key) DO NOTHING RETURNING 1
       )
       SELECT EXISTS (SELECT 1 FROM inserted) AS inserted,
              (SELECT status FROM side_effects WHERE job_key = $2 AND tenant_id = $1::uuid) AS earlier`,
      [job.tenantId, job.jobKey, job.operation],
    );
    if (rows[0]!.inserted) return { earlier: undefined };
    // A record committed by a concurrent run while this statement waited is not in its snapshot.
    return { earlier: rows[0]!.earlier ?? (await this.status(job)) };
  }

  private async status(job: ClaimedJob): Promise<SideEffectStatus> {
    const { rows } = await this.sql.query<{ status: SideEffectStatus }>(
      "SELECT status FROM side_effects WHERE job_key = $1 AND tenant_id = $2::uuid",
      [job.jobKey, job.tenantId],
    );
    return rows[0]!.status;
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
