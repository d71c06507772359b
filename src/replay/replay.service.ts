// Operator replay (api.md): one job, one receipt's unsuccessful jobs, or every job matching a
// filter (a paced background batch). Each replay commits with its audit row, then is handed to BullMQ.
import { Injectable } from "@nestjs/common";
import { AuditRepository } from "../audit/audit.repository.js";
import { notFound } from "../common/id.pipe.js";
import { JobsAdminRepository } from "../jobs/job-reads.js";
import type { Principal, TenantScope } from "../auth/principal.js";
import { AppError } from "../common/app-error.js";
import { Transactions } from "../database/transactions.js";
import { JobQueue } from "../jobs/job-queue.js";
import { JobStateMachine } from "../jobs/state/job-state-machine.js";
import { IN_PROGRESS, REPLAYABLE } from "../jobs/state/job-states.js";
import type { BatchStatus, ReplayPreview } from "./replay-answers.js";
import { type BulkFilter, ReplayRepository } from "./replay.repository.js";
import { ReplayQueue } from "./replay-queue.js";

@Injectable()
export class ReplayService {
  constructor(
    private readonly replays: ReplayRepository,
    private readonly state: JobStateMachine,
    private readonly transactions: Transactions,
    private readonly audit: AuditRepository,
    private readonly jobs: JobQueue,
    private readonly batches: ReplayQueue,
    private readonly jobViews: JobsAdminRepository,
  ) {}

  /** Replays one job: from dead, blocked or cancelled, or from succeeded with `force`. */
  async replayJob(by: Principal, scope: TenantScope, jobId: string, force: boolean) {
    const jobs = await this.transactions.run(async (tx) => {
      const job = await this.replays.lockJob(tx, scope, jobId);
      if (!job) throw notFound("job");
      if (IN_PROGRESS.includes(job.status)) {
        throw new AppError(
          409,
          "job_in_progress",
          `The job is ${job.status}; replay it once it has finished.`,
        );
      }
      if (job.status === "held") {
        throw new AppError(
          409,
          "job_held",
          "The job waits for its paused connection; resume the connection instead.",
        );
      }
      if (job.status === "succeeded" && !force) {
        throw new AppError(
          409,
          "job_succeeded",
          'The job succeeded; replay it with { "force": true } to run it again.',
        );
      }
      if (job.status === "succeeded") await this.replays.forgetCrmDelivery(tx, job.tenantId, job.jobKey);
      const requeued = await this.state.replay(tx, scope, { jobIds: [job.id] }, [job.status]);
      await this.audit.record(tx, by, {
        action: "job.replay",
        tenantId: job.tenantId,
        targetType: "job",
        targetId: job.id,
        details: { from: job.status, force, jobKey: job.jobKey },
      });
      return requeued;
    });
    await this.jobs.enqueue(jobs);
    return (await this.jobViews.find(scope, jobId))!;
  }

  /** Replays the receipt's jobs that did not succeed and are not in progress. */
  async replayReceipt(by: Principal, scope: TenantScope, receiptId: string) {
    const jobs = await this.transactions.run(async (tx) => {
      const tenantId = await this.replays.lockReceipt(tx, scope, receiptId);
      if (!tenantId) throw notFound("receipt");
      const requeued = await this.state.replay(tx, scope, { receiptId }, REPLAYABLE);
      await this.audit.record(tx, by, {
        action: "receipt.replay",
        tenantId,
        targetType: "receipt",
        targetId: receiptId,
        details: { jobIds: requeued.map((job) => job.id) },
      });
      return requeued;
    });
    await this.jobs.enqueue(jobs);
    return jobs;
  }

  async preview(scope: TenantScope, filter: BulkFilter, limit: number): Promise<ReplayPreview> {
    await this.seen(scope, filter);
    return this.replays.preview(scope, filter, limit);
  }

  /** `404` for a filter naming a connection (or tenant) the scope cannot see: nothing written. */
  private async seen(scope: TenantScope, filter: BulkFilter): Promise<void> {
    const unseen = await this.replays.unseen(scope, filter);
    if (unseen) throw notFound(unseen);
  }

  /** Creates a bulk replay; the worker runs it, paced. */
  async createBatch(by: Principal, scope: TenantScope, filter: BulkFilter, limit: number) {
    await this.seen(scope, filter);
    const batch = await this.transactions.run(async (tx) => {
      const created = await this.replays.createBatch(tx, scope, { apiKeyId: by.keyId, filter, limit });
      const tenantId = by.tenantId ?? filter.tenantId ?? null;
      const entry = (forTenant: string | null, matched: number) => ({
        action: "replay.create" as const,
        tenantId: forTenant,
        targetType: "replay",
        targetId: created.id,
        details: { filter: JSON.parse(JSON.stringify(filter)) as object, limit, matched },
      });
      // An operator's platform-wide replay is also written to each tenant it touches, so every
      // tenant's audit log shows who replayed its jobs.
      const perTenant = tenantId === null ? await this.replays.tenantsOf(tx, created.id) : [];
      await this.audit.record(
        tx,
        by,
        entry(tenantId, created.matched),
        ...perTenant.map((tenant) => entry(tenant.tenantId, tenant.matched)),
      );
      return created;
    });
    await this.batches.enqueue(batch.id);
    return batch;
  }

  async progress(scope: TenantScope, batchId: string): Promise<BatchStatus> {
    const batch = await this.replays.progress(scope, batchId);
    if (!batch) throw notFound("replay");
    const finished = batch.status === "done" && batch.succeeded + batch.failed === batch.queued;
    return { ...batch, status: batch.status === "pending" ? "pending" : finished ? "done" : "running" };
  }
}
