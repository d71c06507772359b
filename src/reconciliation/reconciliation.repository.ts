// The records of reconciliation and backfill: which listed leads Leadgate already has, and the
// backfills (a connection's last run is recorded on it by the store: ConnectionSubstates). Every method takes the tenant and puts it in its `where`.
import { Injectable } from "@nestjs/common";
import { PrismaService } from "../database/prisma.service.js";

export interface BackfillRow {
  id: string;
  tenantId: string;
  connectionId: string;
  windowFrom: Date;
  windowTo: Date;
  /** `counting`: a dry run's count that outlasted its request, done by the job. */
  status: "running" | "counting" | "done" | "failed";
  /** Null until counted. */
  matched: number | null;
  ingested: number;
  duplicates: number;
  error: string | null;
}

const BACKFILL_COLUMNS = `id, tenant_id AS "tenantId", connection_id AS "connectionId", window_from AS "windowFrom",
  window_to AS "windowTo", status, matched, ingested, duplicates, error`;

@Injectable()
export class ReconciliationRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Of `leadIds`, those with a receipt on this connection, each with its earliest event time
   * (served by receipts' (tenant_id, lead_id) index).
   */
  async knownLeads(tenantId: string, connectionId: string, leadIds: string[]): Promise<Map<string, Date>> {
    if (leadIds.length === 0) return new Map();
    const { rows } = await this.prisma.pool.query<{ lead_id: string; first: Date }>(
      `SELECT lead_id, min(occurred_at) AS first FROM receipts
       WHERE tenant_id = $1::uuid AND connection_id = $2::uuid AND lead_id = ANY($3::text[])
       GROUP BY lead_id`,
      [tenantId, connectionId, leadIds],
    );
    return new Map(rows.map((row) => [row.lead_id, row.first]));
  }

  /** When the connection was made: a periodic run looks no further back (older leads are a backfill's). */
  async connectionCreatedAt(tenantId: string, connectionId: string): Promise<Date | undefined> {
    const { rows } = await this.prisma.pool.query<{ created_at: Date }>(
      "SELECT created_at FROM connections WHERE tenant_id = $1::uuid AND id = $2::uuid",
      [tenantId, connectionId],
    );
    return rows[0]?.created_at;
  }

  /** The backfill a job runs, if the job is a backfill's. */
  async backfillOfJob(tenantId: string, jobId: string): Promise<BackfillRow | undefined> {
    const { rows } = await this.prisma.pool.query<BackfillRow>(
      `SELECT ${BACKFILL_COLUMNS} FROM backfills WHERE tenant_id = $1::uuid AND job_id = $2::uuid`,
      [tenantId, jobId],
    );
    return rows[0];
  }

  /** A running backfill's (or count's) progress, or its end (done / failed); a finished one does not change again. */
  async updateBackfill(
    tenantId: string,
    id: string,
    change: {
      matched: number | null;
      ingested: number;
      duplicates: number;
      status?: "done" | "failed";
      error?: string;
    },
  ): Promise<void> {
    await this.prisma.pool.query(
      `UPDATE backfills SET matched = $3, ingested = $4, duplicates = $5, status = COALESCE($6, status),
              error = COALESCE($7, error), finished_at = CASE WHEN $6 IS NULL THEN NULL ELSE now() END
       WHERE tenant_id = $1::uuid AND id = $2::uuid AND status IN ('running', 'counting')`,
      [
        tenantId,
        id,
        change.matched,
        change.ingested,
        change.duplicates,
        change.status ?? null,
        change.error ?? null,
      ],
    );
  }
}
