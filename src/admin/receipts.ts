// Receipts: what was accepted, with its jobs and how often it was delivered again.
import { Controller, Get, Param, Query } from "@nestjs/common";
import { ApiOkResponse, ApiOperation, ApiTags } from "@nestjs/swagger";
import { AdminApi } from "../auth/api-key.guard.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { type Principal, scopeOf } from "../auth/principal.js";
import { listScope } from "../auth/list-filters.js";
import { IdPipe, notFound } from "../common/id.pipe.js";
import { ListReads } from "../auth/list-reads.js";
import { type Page, PageOf, toPage } from "../common/pagination.js";
import { ReceiptDetail, ReceiptsQuery, ReceiptView, ReceiptsRepository } from "../ingestion/receipt-reads.js";

@ApiTags("receipts")
@AdminApi()
@Controller("admin/receipts")
export class ReceiptsController {
  constructor(
    private readonly receipts: ReceiptsRepository,
    private readonly reads: ListReads,
  ) {}

  @ApiOperation({
    description:
      "Lists receipts (what was accepted), newest first, filtered by connection, provider, kind, lead and time.",
  })
  @Get()
  @ApiOkResponse({ type: PageOf(ReceiptView) })
  async list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: ReceiptsQuery,
  ): Promise<Page<ReceiptView>> {
    const scope = listScope(principal, query.tenantId);
    return toPage(
      await this.reads.run(principal, (db) => this.receipts.list(scope, query, db)),
      query,
      (row) => row.receivedAt,
    );
  }

  @ApiOperation({
    description: "Reads one receipt with its payload (until purged), its jobs and its duplicate count.",
  })
  @Get(":id")
  @ApiOkResponse({
    description: "the receipt with its payload (until purged), its jobs and its duplicate count",
    type: ReceiptDetail,
  })
  async get(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    const receipt = await this.receipts.find(scopeOf(principal), id);
    if (!receipt) throw notFound("receipt");
    return receipt;
  }
}
