// Conflicts: the same idempotency key delivered with a different payload digest (kept, never applied).
import { Controller, Get, Query } from "@nestjs/common";
import { ApiOkResponse, ApiOperation, ApiTags } from "@nestjs/swagger";
import { listScope, TenantListQuery } from "../auth/list-filters.js";
import { AdminApi } from "../auth/api-key.guard.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { type Principal } from "../auth/principal.js";
import { type Page, PageOf, pageAfter, toPage } from "../common/pagination.js";
import { ConflictView, ConflictsRepository } from "../ingestion/payload-conflicts.js";

@ApiTags("conflicts")
@AdminApi()
@Controller("admin/conflicts")
export class ConflictsController {
  constructor(private readonly conflicts: ConflictsRepository) {}

  @ApiOperation({
    description:
      "Lists payload conflicts: the same idempotency key delivered with a different payload digest.",
  })
  @Get()
  @ApiOkResponse({
    description: "same key, different payload digest: the stored receipt and both digests",
    type: PageOf(ConflictView),
  })
  async list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: TenantListQuery,
  ): Promise<Page<ConflictView>> {
    return toPage(
      await this.conflicts.list(listScope(principal, query.tenantId), pageAfter("createdAt", query)),
      query,
      (row) => row.createdAt,
    );
  }
}
