import { Injectable } from "@nestjs/common";
import { PrismaService } from "../database/prisma.service.js";
import type { ClaimedJob } from "./jobs.repository.js";

export type SideEffectStatus = "started" | "succeeded" | "skipped";

/**
 * Local operation records: written under the job key *before* an external call, so a re-run can
 * tell "never tried" from "tried, outcome unknown" (reconcile at the destination first) and "done".
 */
@Injectable()
export class SideEffectsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** Records the start of the effect; answers what an earlier run left, if anything. */
  async begin(job: ClaimedJob): Promise<{ earlier: SideEffectStatus | undefined }> {
    const inserted = await this.prisma.sideEffect.createMany({
      data: { tenantId: job.tenantId, jobKey: job.jobKey, operation: job.operation, status: "started" },
      skipDuplicates: true,
    });
    if (inserted.count === 1) return { earlier: undefined };
    const record = await this.prisma.sideEffect.findFirstOrThrow({
      where: { jobKey: job.jobKey, tenantId: job.tenantId },
      select: { status: true },
    });
    return { earlier: record.status as SideEffectStatus };
  }

  async finish(
    job: ClaimedJob,
    status: Exclude<SideEffectStatus, "started">,
    externalRef?: string,
  ): Promise<void> {
    await this.prisma.sideEffect.updateMany({
      where: { jobKey: job.jobKey, tenantId: job.tenantId },
      data: { status, externalRef: externalRef ?? null },
    });
  }
}
