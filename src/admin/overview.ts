// GET /admin/overview (api.md "Console and users"): the console's first figures for a tenant, or for
// every tenant (operators without `?tenantId`).
import { Controller, Get, Query } from "@nestjs/common";
import { ApiOkResponse, ApiOperation, ApiTags } from "@nestjs/swagger";
import { AdminApi } from "../auth/api-key.guard.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { type Principal } from "../auth/principal.js";
import { listScope } from "../auth/list-filters.js";
import { ListReads } from "../auth/list-reads.js";
import { OverviewQuery, Overview, OverviewRepository } from "../tenants/tenant-overview.js";

@ApiTags("overview")
@AdminApi()
@Controller("admin/overview")
export class OverviewController {
  constructor(
    private readonly overview: OverviewRepository,
    private readonly reads: ListReads,
  ) {}

  @ApiOperation({
    description:
      "The console's first figures for a tenant (an operator: one tenant or all): leads, receipts and failures of the last 24 h, open alerts, connections needing attention.",
  })
  @Get()
  @ApiOkResponse({ type: Overview })
  get(@CurrentPrincipal() principal: Principal, @Query() query: OverviewQuery): Promise<Overview> {
    const scope = listScope(principal, query.tenantId);
    return this.reads.run(principal, (db) => this.overview.figures(scope, new Date(), db));
  }
}
