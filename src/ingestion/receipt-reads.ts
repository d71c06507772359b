// What the admin API shows of receipts: the list query (GET /admin/receipts), its filters and view.
import { Injectable } from "@nestjs/common";
import { ApiProperty, ApiPropertyOptional, OmitType } from "@nestjs/swagger";
import { IsIn, IsString, Length } from "class-validator";
import { type TenantScope, tenantWhere } from "../auth/principal.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Prisma } from "../generated/prisma/client.js";
import { EVENT_KINDS, type EventKind, PROVIDERS, type Provider } from "../providers/provider-event.js";
import { TimeRangeQuery, timeRange } from "../auth/list-filters.js";
import { JOB_VIEW, JobView } from "../jobs/job-reads.js";
import { payloadOf, withPurgeTimes } from "./receipt-payloads.js";
import { pageAfter } from "../common/pagination.js";
import { NullableDate, NullableString } from "../common/api-properties.js";
import { NoNul, Optional } from "../common/validation.js";

export class ReceiptsQuery extends TimeRangeQuery {
  @ApiPropertyOptional({ enum: PROVIDERS })
  @Optional()
  @IsIn(PROVIDERS)
  provider?: Provider;

  @ApiPropertyOptional({ enum: EVENT_KINDS })
  @Optional()
  @IsIn(EVENT_KINDS)
  kind?: EventKind;

  @ApiPropertyOptional({ description: "the provider's lead id" })
  @Optional()
  @IsString()
  @Length(1, 200)
  @NoNul()
  leadId?: string;
}

const RECEIPT_VIEW = {
  id: true,
  tenantId: true,
  connectionId: true,
  provider: true,
  accountId: true,
  idempotencyKey: true,
  eventId: true,
  leadId: true,
  kind: true,
  status: true,
  occurredAt: true,
  receivedAt: true,
  payloadDigest: true,
  duplicateCount: true,
  lastDuplicateAt: true,
  payloadPurgedAt: true,
  // webhook | reconcile | backfill
  source: true,
} satisfies Prisma.ReceiptSelect;
type ReceiptRow = Prisma.ReceiptGetPayload<{ select: typeof RECEIPT_VIEW }>;

/** A receipt as the admin API lists it: an accepted provider event, without its payload. */
export class ReceiptView implements ReceiptRow {
  @ApiProperty({ format: "uuid" })
  id!: string;

  @ApiProperty({ format: "uuid" })
  tenantId!: string;

  @ApiProperty({ format: "uuid" })
  connectionId!: string;

  @ApiProperty({ enum: PROVIDERS })
  provider!: string;

  @ApiProperty()
  accountId!: string;

  @ApiProperty()
  idempotencyKey!: string;

  @NullableString()
  eventId!: string | null;

  @ApiProperty()
  leadId!: string;

  @ApiProperty({ enum: EVENT_KINDS })
  kind!: string;

  @ApiProperty()
  status!: string;

  @ApiProperty()
  occurredAt!: Date;

  @ApiProperty()
  receivedAt!: Date;

  @ApiProperty()
  payloadDigest!: string;

  @ApiProperty()
  duplicateCount!: number;

  @NullableDate()
  lastDuplicateAt!: Date | null;

  @NullableDate("when the raw payload was purged (retention)")
  payloadPurgedAt!: Date | null;

  @ApiProperty({ enum: ["webhook", "reconcile", "backfill"] })
  source!: string;
}

/** A receipt's job in its detail view: the job list's columns without `result` (GET /admin/jobs/{id} has it). */
export class ReceiptJob extends OmitType(JobView, ["result"] as const) {}

/** One receipt with its jobs and its raw payload. */
export class ReceiptDetail extends ReceiptView {
  @ApiProperty({ type: () => ReceiptJob, isArray: true, description: "its jobs, oldest first" })
  jobs!: ReceiptJob[];

  @ApiProperty({
    type: "object",
    additionalProperties: true,
    nullable: true,
    description: "the payload as the provider sent it; null once purged (retention)",
  })
  payload!: unknown;
}

@Injectable()
export class ReceiptsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /** The list, on `db`: the primary, or the read replica (ListReads). */
  async list(
    scope: TenantScope,
    query: ReceiptsQuery,
    db: PrismaService = this.prisma,
  ): Promise<ReceiptView[]> {
    const page = pageAfter("receivedAt", query);
    const rows = await db.receipt.findMany({
      where: {
        AND: [tenantWhere(scope), page.where],
        connectionId: query.connectionId,
        provider: query.provider,
        kind: query.kind,
        leadId: query.leadId,
        receivedAt: timeRange(query),
      },
      orderBy: [{ receivedAt: "desc" }, { id: "desc" }],
      take: page.take,
      select: RECEIPT_VIEW,
    });
    return withPurgeTimes(db, rows);
  }

  async find(scope: TenantScope, id: string) {
    const receipt = await this.prisma.receipt.findFirst({
      where: { ...tenantWhere(scope), id },
      select: {
        ...RECEIPT_VIEW,
        jobs: { where: tenantWhere(scope), select: JOB_VIEW, orderBy: { createdAt: "asc" } },
      },
    });
    if (!receipt) return null;
    const [view] = await withPurgeTimes(this.prisma, [receipt]);
    return { ...view!, payload: await payloadOf(this.prisma, scope, receipt) };
  }
}
