import { Injectable } from "@nestjs/common";
import { inPoolTransaction } from "../database/pool-transaction.js";
import { PrismaService } from "../database/prisma.service.js";
import { JOB_STATUSES, TERMINAL } from "../jobs/state/job-states.js";
import { PARTITIONED, type PartitionedTable, sqlList } from "./partitioned-tables.js";

/** Job statuses that still need their receipt: not finished yet. */
const UNFINISHED = sqlList(JOB_STATUSES.filter((status) => !TERMINAL.includes(status)));
const FINISHED = sqlList(TERMINAL);

/**
 * Retention row by row, in bounded batches: the receipts (unpartitioned: their identity decides
 * races), and the rows of the partitioned tables' DEFAULT partitions (survivors of dropped months,
 * and months that had no partition). Whole months go by partition drop (partitions.repository.ts).
 * Nothing a job still needs is purged: a payload stays while any job of its receipt has not
 * succeeded (dead and cancelled jobs may be replayed), a receipt while any job is unfinished.
 * Side-effect records are kept: after its receipt is gone, a re-delivered event makes new jobs
 * under the same job keys; the auto-reply and the CRM delivery find their records and are not sent
 * again, and the lead upsert is keyed by the provider's lead id (no second lead).
 */
@Injectable()
export class RetentionRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Deletes up to `batch` rows of `table`'s DEFAULT partition older than `cutoff` that nothing needs
   * any more; answers how many. A purged payload marks its receipt (payloadPurgedAt).
   */
  async purgeDefault(table: PartitionedTable, cutoff: Date, batch: number): Promise<number> {
    const { key, survives } = PARTITIONED[table];
    const mark =
      table === "receipt_payloads"
        ? `, marked AS (UPDATE receipts r SET payload_purged_at = now() FROM gone g
                        WHERE r.id = g.receipt_id AND r.tenant_id = g.tenant_id)`
        : "";
    const { rows } = await this.prisma.pool.query<{ n: number }>(
      `WITH gone AS (
         DELETE FROM ${table}_default WHERE ctid = ANY(ARRAY(
           SELECT d.ctid FROM ${table}_default d WHERE d.${key} < $1 AND NOT (${survives("d")}) LIMIT $2))
         RETURNING *
       )${mark}
       SELECT count(*)::int AS n FROM gone`,
      [cutoff, batch],
    );
    return rows[0]!.n;
  }

  /**
   * Deletes up to `batch` finished jobs without a receipt (a connection's reconciliation and
   * provider-sync, an alert's notification) completed before `cutoff`, with their replay batch items;
   * answers how many. Their attempts then go with their month's partition instead of surviving into
   * DEFAULT for ever. A job a running backfill still names is kept (the backfill's state reads it).
   * The candidates are locked (SKIP LOCKED) and their status checked again on the locked row, so a
   * replay that requeued one meanwhile keeps it.
   */
  async purgeUnownedJobs(cutoff: Date, batch: number): Promise<number> {
    const { rowCount } = await this.prisma.pool.query(
      `WITH expired AS (
         SELECT j.id, j.tenant_id FROM jobs j
         WHERE j.receipt_id IS NULL AND j.status IN ${FINISHED} AND j.completed_at < $1
           AND NOT EXISTS (SELECT 1 FROM backfills b WHERE b.job_id = j.id AND b.tenant_id = j.tenant_id
                           AND b.status IN ('running', 'counting'))
         ORDER BY j.completed_at LIMIT $2 FOR UPDATE OF j SKIP LOCKED
       ), batch_items AS (
         DELETE FROM replay_batch_jobs i USING expired e WHERE i.job_id = e.id AND i.tenant_id = e.tenant_id
       )
       DELETE FROM jobs j USING expired e WHERE j.id = e.id AND j.tenant_id = e.tenant_id`,
      [cutoff, batch],
    );
    return rowCount ?? 0;
  }

  /**
   * Deletes receipts received before `cutoff`, with their jobs, payloads and conflicts; answers how
   * many. The candidates' jobs are locked before their statuses are checked again, so a replay that
   * committed meanwhile keeps its receipt, and one that comes later waits, then finds nothing. Their
   * jobs' attempts go with their month's partition (job_attempts has no foreign key to jobs).
   */
  async purgeReceipts(cutoff: Date, batch: number): Promise<{ deleted: number; more: boolean }> {
    return inPoolTransaction(this.prisma.pool, async (client) => {
      const candidates = await client.query<{ id: string; tenant_id: string }>(
        `SELECT r.id, r.tenant_id FROM receipts r
         WHERE r.received_at < $1
           AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.receipt_id = r.id AND j.tenant_id = r.tenant_id
                           AND j.status IN ${UNFINISHED})
         ORDER BY r.received_at LIMIT $2 FOR UPDATE OF r SKIP LOCKED`,
        [cutoff, batch],
      );
      const ids = candidates.rows.map((row) => row.id);
      await client.query(`SELECT 1 FROM jobs WHERE receipt_id = ANY($1::uuid[]) FOR UPDATE`, [ids]);
      // A new statement, so a new snapshot: job statuses as they are now that they are locked.
      const { rows } = await client.query<{ id: string; tenant_id: string }>(
        `WITH expired AS (
           SELECT r.id, r.tenant_id, r.received_at FROM receipts r
           WHERE r.id = ANY($1::uuid[])
             AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.receipt_id = r.id AND j.tenant_id = r.tenant_id
                             AND j.status IN ${UNFINISHED})
         ), expired_jobs AS (
           SELECT j.id, j.tenant_id FROM jobs j JOIN expired e ON j.receipt_id = e.id AND j.tenant_id = e.tenant_id
         ), payloads AS (
           DELETE FROM receipt_payloads p USING expired e
           WHERE p.receipt_id = e.id AND p.tenant_id = e.tenant_id AND p.received_at = e.received_at
         ), batch_items AS (
           DELETE FROM replay_batch_jobs i USING expired_jobs j WHERE i.job_id = j.id AND i.tenant_id = j.tenant_id
         ), conflicts AS (
           DELETE FROM payload_conflicts c USING expired e WHERE c.receipt_id = e.id AND c.tenant_id = e.tenant_id
         ), jobs AS (
           DELETE FROM jobs j USING expired_jobs x WHERE j.id = x.id AND j.tenant_id = x.tenant_id
         )
         SELECT id, tenant_id FROM expired`,
        [ids],
      );
      // The receipts in a second statement: within one statement, the foreign keys of the jobs
      // deleted beside them would still hold the receipts.
      await client.query(
        `DELETE FROM receipts WHERE (id, tenant_id) IN (SELECT * FROM unnest($1::uuid[], $2::uuid[]))`,
        [rows.map((row) => row.id), rows.map((row) => row.tenant_id)],
      );
      return { deleted: rows.length, more: candidates.rows.length === batch };
    });
  }
}
