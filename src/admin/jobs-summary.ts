// GET /admin/jobs/summary (api.md "Console and users"): matching jobs counted by connection, operation
// and error code, for the console's failures screen.
import { Controller, Get, Query } from "@nestjs/common";
import { ApiOkResponse, ApiOperation, ApiTags } from "@nestjs/swagger";
import { AdminApi } from "../auth/api-key.guard.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { type Principal } from "../auth/principal.js";
import { AppError } from "../common/app-error.js";
import { listScope } from "../auth/list-filters.js";
import { ListReads } from "../auth/list-reads.js";
import { JobsSummaryQuery, JobsSummary, JobsSummaryRepository } from "../jobs/job-summary-reads.js";

@ApiTags("jobs")
@AdminApi()
@Controller("admin/jobs/summary")
export class JobsSummaryController {
  constructor(
    private readonly summary: JobsSummaryRepository,
    private readonly reads: ListReads,
  ) {}

  @ApiOperation({
    description:
      "Counts the matching jobs grouped by connection, operation and error code, for a failures screen.",
  })
  @Get()
  @ApiOkResponse({ type: JobsSummary })
  async get(
    @CurrentPrincipal() principal: Principal,
    @Query() query: JobsSummaryQuery,
  ): Promise<JobsSummary> {
    if (query.from && query.to && query.from >= query.to)
      throw new AppError(400, "validation_failed", "Invalid input: from.", {
        from: ["from must be before to"],
      });
    const scope = listScope(principal, query.tenantId);
    return { groups: await this.reads.run(principal, (db) => this.summary.groups(scope, query, db)) };
  }
}
