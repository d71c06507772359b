// Receipts: what was accepted, with its jobs and how often it was delivered again.
import { Controller, Get, Injectable, Param, Query } from "@nestjs/common";
import { ApiOkResponse, ApiPropertyOptional, ApiTags } from "@nestjs/swagger";
import { IsIn, IsString, Length } from "class-validator";
import { AdminApi } from "../auth/api-key.guard.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { type Principal, scopeOf, type TenantScope, tenantWhere } from "../auth/principal.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Prisma } from "../generated/prisma/client.js";
import { EVENT_KINDS, type EventKind, PROVIDERS, type Provider } from "../providers/provider-event.js";
import { TimeRangeQuery, timeRange, listScope } from "./filters.js";
import { IdPipe, notFound } from "./id.pipe.js";
import { JOB_VIEW } from "./jobs.js";
import { payloadOf, withPurgeTimes } from "./receipt-payloads.js";
import { type Page, pageAfter, toPage } from "./pagination.js";
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
type ReceiptView = Prisma.ReceiptGetPayload<{ select: typeof RECEIPT_VIEW }>;

@Injectable()
export class ReceiptsRepository {
  constructor(private readonly prisma: PrismaService) {}

  async list(scope: TenantScope, query: ReceiptsQuery): Promise<ReceiptView[]> {
    const page = pageAfter("receivedAt", query);
    const rows = await this.prisma.receipt.findMany({
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
    return withPurgeTimes(this.prisma, rows);
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

@ApiTags("receipts")
@AdminApi()
@Controller("admin/receipts")
export class ReceiptsController {
  constructor(private readonly receipts: ReceiptsRepository) {}

  @Get()
  async list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: ReceiptsQuery,
  ): Promise<Page<ReceiptView>> {
    return toPage(
      await this.receipts.list(listScope(principal, query.tenantId), query),
      query,
      (row) => row.receivedAt,
    );
  }

  @Get(":id")
  @ApiOkResponse({
    description: "the receipt with its payload (until purged), its jobs and its duplicate count",
  })
  async get(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    const receipt = await this.receipts.find(scopeOf(principal), id);
    if (!receipt) throw notFound("receipt");
    return receipt;
  }
}
