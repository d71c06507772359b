// Replay's records: which jobs a replay may take, bulk replay batches and their progress. Moving a
// job back to `queued` is the job state machine's `replay` transition (src/jobs/state).
import { Injectable } from "@nestjs/common";
import { PLATFORM, type TenantScope, tenantParam } from "../auth/principal.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Tx } from "../database/transactions.js";
import type { JobStatus, ReplayableStatus } from "../jobs/state/job-states.js";
import type { ReplayPreview, ReplaySampleJob } from "./replay-answers.js";

export interface BulkFilter {
  statuses: ReplayableStatus[];
  operation?: string;
  connectionId?: string;
  errorCode?: string;
  provider?: string;
  tenantId?: string;
  from?: Date;
  to?: Date;
}

export interface BatchProgress {
  id: string;
  tenantId: string | null;
  status: "pending" | "running" | "done";
  matched: number;
  queued: number;
  skipped: number;
  succeeded: number;
  failed: number;
  createdAt: Date;
  finishedAt: Date | null;
}

/** The jobs a bulk filter matches, oldest first (job ids are fixed when the batch is created). */
function matching(scope: TenantScope, filter: BulkFilter, first: number): { sql: string; params: unknown[] } {
  const params: unknown[] = [
    tenantParam(scope),
    filter.statuses,
    filter.operation ?? null,
    filter.connectionId ?? null,
    filter.provider ?? null,
    filter.tenantId ?? null,
    filter.from ?? null,
    filter.to ?? null,
    filter.errorCode ?? null,
  ];
  const p = (n: number) => `$${first + n}`;
  const sql = `FROM jobs j LEFT JOIN connections c ON c.id = j.connection_id AND c.tenant_id = j.tenant_id
    WHERE (${p(0)}::uuid IS NULL OR j.tenant_id = ${p(0)}::uuid)
      AND j.status = ANY(${p(1)}::text[])
      AND (${p(2)}::text IS NULL OR j.operation = ${p(2)})
      AND (${p(3)}::uuid IS NULL OR j.connection_id = ${p(3)}::uuid)
      AND (${p(4)}::text IS NULL OR c.provider = ${p(4)})
      AND (${p(5)}::uuid IS NULL OR j.tenant_id = ${p(5)}::uuid)
      AND (${p(6)}::timestamptz IS NULL OR j.created_at >= ${p(6)})
      AND (${p(7)}::timestamptz IS NULL OR j.created_at < ${p(7)})
      AND (${p(8)}::text IS NULL OR j.last_error_code = ${p(8)})`;
  return { sql, params };
}

@Injectable()
export class ReplayRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Locks and reads a job of the scope, for the replay decision. */
  async lockJob(tx: Tx, scope: TenantScope, id: string) {
    const rows = await tx.$queryRawUnsafe<
      { id: string; tenantId: string; status: JobStatus; jobKey: string }[]
    >(
      `SELECT id, tenant_id AS "tenantId", status, job_key AS "jobKey" FROM jobs
       WHERE id = $1::uuid AND ($2::uuid IS NULL OR tenant_id = $2::uuid) FOR UPDATE`,
      id,
      tenantParam(scope),
    );
    return rows[0];
  }

  /**
   * A forced replay of a CRM delivery sends it again: its record of an accepted delivery goes.
   * (An auto-reply's record stays: a reply already sent is never sent twice.)
   */
  async forgetCrmDelivery(tx: Tx, tenantId: string, jobKey: string): Promise<void> {
    await tx.sideEffect.deleteMany({ where: { tenantId, jobKey, operation: "crm-delivery" } });
  }

  /** Locks a receipt of the scope (one replay of it at a time); answers its tenant. */
  async lockReceipt(tx: Tx, scope: TenantScope, id: string): Promise<string | undefined> {
    const rows = await tx.$queryRawUnsafe<{ tenantId: string }[]>(
      `SELECT tenant_id AS "tenantId" FROM receipts
       WHERE id = $1::uuid AND ($2::uuid IS NULL OR tenant_id = $2::uuid) FOR UPDATE`,
      id,
      tenantParam(scope),
    );
    return rows[0]?.tenantId;
  }

  /** A dry run: how many jobs a bulk replay would re-run, and the first few of them. */
  /**
   * The id the filter names that the scope cannot see (its connection, or an operator's tenant):
   * `connection` or `tenant`, else undefined. A filter naming another tenant's connection would match
   * nothing, and is refused as an unknown id instead (api.md: 404).
   */
  async unseen(scope: TenantScope, filter: BulkFilter): Promise<"connection" | "tenant" | undefined> {
    const tenantId = scope === PLATFORM ? (filter.tenantId ?? null) : scope;
    if (filter.tenantId !== undefined && scope === PLATFORM) {
      const [tenant] = await this.prisma.$queryRaw<{ id: string }[]>`
        SELECT id FROM tenants WHERE id = ${filter.tenantId}::uuid`;
      if (!tenant) return "tenant";
    }
    if (filter.connectionId !== undefined) {
      const [connection] = await this.prisma.$queryRaw<{ id: string }[]>`
        SELECT id FROM connections WHERE id = ${filter.connectionId}::uuid
          AND (${tenantId}::uuid IS NULL OR tenant_id = ${tenantId}::uuid)`;
      if (!connection) return "connection";
    }
    return undefined;
  }

  async preview(scope: TenantScope, filter: BulkFilter, limit: number): Promise<ReplayPreview> {
    const { sql, params } = matching(scope, filter, 1);
    const [count] = await this.prisma.$queryRawUnsafe<{ count: bigint }[]>(
      `SELECT count(*) ${sql}`,
      ...params,
    );
    const sample = await this.prisma.$queryRawUnsafe<ReplaySampleJob[]>(
      `SELECT j.id, j.tenant_id AS "tenantId", j.connection_id AS "connectionId", j.receipt_id AS "receiptId",
              j.operation, j.job_key AS "jobKey", j.status, j.attempts, j.last_error_code AS "lastErrorCode",
              j.created_at AS "createdAt"
       ${sql} ORDER BY j.created_at, j.id LIMIT 10`,
      ...params,
    );
    return { matched: Math.min(Number(count?.count ?? 0), limit), sample };
  }

  /** Creates the batch and fixes its jobs (the first `limit` matches, oldest first). */
  async createBatch(
    tx: Tx,
    scope: TenantScope,
    input: { apiKeyId: string | null; filter: BulkFilter; limit: number },
  ): Promise<{ id: string; matched: number }> {
    const batch = await tx.replayBatch.create({
      data: {
        tenantId: tenantParam(scope) ?? input.filter.tenantId ?? null,
        apiKeyId: input.apiKeyId,
        filter: JSON.parse(JSON.stringify(input.filter)) as object,
        status: "pending",
      },
      select: { id: true },
    });
    const { sql, params } = matching(scope, input.filter, 3);
    const matched = await tx.$executeRawUnsafe(
      `INSERT INTO replay_batch_jobs (batch_id, job_id, tenant_id)
       SELECT $1::uuid, j.id, j.tenant_id ${sql} ORDER BY j.created_at, j.id LIMIT $2`,
      batch.id,
      input.limit,
      ...params,
    );
    await tx.replayBatch.update({ where: { id: batch.id }, data: { matched } });
    return { id: batch.id, matched };
  }

  /** The tenants whose jobs a batch holds, with how many each (an operator's batch may span many). */
  async tenantsOf(tx: Tx, batchId: string): Promise<{ tenantId: string; matched: number }[]> {
    return tx.$queryRaw`
      SELECT tenant_id AS "tenantId", count(*)::int AS matched FROM replay_batch_jobs
      WHERE batch_id = ${batchId}::uuid GROUP BY tenant_id ORDER BY tenant_id`;
  }

  /** Re-queued jobs of the batch still on their way (queued, running, retrying): the pacing window. */
  async inFlight(batchId: string): Promise<number> {
    const [row] = await this.prisma.$queryRaw<{ count: bigint }[]>`
      SELECT count(*) FROM replay_batch_jobs i JOIN jobs j ON j.id = i.job_id AND j.tenant_id = i.tenant_id
      WHERE i.batch_id = ${batchId}::uuid AND i.state = 'queued' AND j.status IN ('queued', 'running', 'retrying')`;
    return Number(row?.count ?? 0);
  }

  async pendingCount(batchId: string): Promise<number> {
    return this.prisma.replayBatchJob.count({ where: { batchId, state: "pending" } });
  }

  async markBatch(batchId: string, status: "running" | "done"): Promise<void> {
    await this.prisma.replayBatch.updateMany({
      where: { id: batchId, status: { not: "done" } },
      data: { status, finishedAt: status === "done" ? new Date() : undefined },
    });
  }

  findBatch(batchId: string) {
    return this.prisma.replayBatch.findUnique({
      where: { id: batchId },
      select: { id: true, status: true, filter: true },
    });
  }

  /** Batches not yet fully queued and older than `graceMs`: the dispatcher makes sure each is in BullMQ. */
  async unfinishedBatches(graceMs: number): Promise<string[]> {
    const rows = await this.prisma.replayBatch.findMany({
      where: { status: { in: ["pending", "running"] }, createdAt: { lt: new Date(Date.now() - graceMs) } },
      select: { id: true },
      orderBy: { createdAt: "asc" },
      take: 100,
    });
    return rows.map((row) => row.id);
  }

  /** Progress of a batch of the scope; counts come from the items and the jobs' current statuses. */
  async progress(scope: TenantScope, batchId: string): Promise<BatchProgress | undefined> {
    const rows = await this.prisma.$queryRawUnsafe<BatchProgress[]>(
      `SELECT b.id, b.tenant_id AS "tenantId", b.status, b.matched, b.created_at AS "createdAt",
              b.finished_at AS "finishedAt",
              count(*) FILTER (WHERE i.state = 'queued')::int AS queued,
              count(*) FILTER (WHERE i.state = 'skipped')::int AS skipped,
              count(*) FILTER (WHERE i.state = 'queued' AND j.status = 'succeeded')::int AS succeeded,
              count(*) FILTER (WHERE i.state = 'queued' AND j.status IN ('dead', 'blocked', 'cancelled'))::int AS failed
       FROM replay_batches b
       LEFT JOIN replay_batch_jobs i ON i.batch_id = b.id
       LEFT JOIN jobs j ON j.id = i.job_id AND j.tenant_id = i.tenant_id
       WHERE b.id = $1::uuid AND ($2::uuid IS NULL OR b.tenant_id = $2::uuid)
       GROUP BY b.id`,
      batchId,
      tenantParam(scope),
    );
    return rows[0];
  }
}
