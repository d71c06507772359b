// Jobs: every side effect with its status and its attempt history.
import { Controller, Get, Param, Query } from "@nestjs/common";
import { ApiOkResponse, ApiOperation, ApiTags } from "@nestjs/swagger";
import { AdminApi } from "../auth/api-key.guard.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { type Principal, scopeOf } from "../auth/principal.js";
import { listScope } from "../auth/list-filters.js";
import { IdPipe, notFound } from "../common/id.pipe.js";
import { ListReads } from "../auth/list-reads.js";
import { type Page, PageOf, toPage } from "../common/pagination.js";
import { JobsQuery, JobView, JobDetail, JobsAdminRepository } from "../jobs/job-reads.js";

@ApiTags("jobs")
@AdminApi()
@Controller("admin/jobs")
export class JobsController {
  constructor(
    private readonly jobs: JobsAdminRepository,
    private readonly reads: ListReads,
  ) {}

  @ApiOperation({
    description:
      "Lists jobs (side effects), newest first, filtered by status, operation, connection, receipt and time.",
  })
  @Get()
  @ApiOkResponse({ type: PageOf(JobView) })
  async list(@CurrentPrincipal() principal: Principal, @Query() query: JobsQuery): Promise<Page<JobView>> {
    const scope = listScope(principal, query.tenantId);
    return toPage(
      await this.reads.run(principal, (db) => this.jobs.list(scope, query, db)),
      query,
      (row) => row.createdAt,
    );
  }

  @ApiOperation({ description: "Reads one job with every attempt: time, outcome, error code, duration." })
  @Get(":id")
  @ApiOkResponse({
    description: "the job with every attempt: time, outcome, error code, duration",
    type: JobDetail,
  })
  async get(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string): Promise<JobDetail> {
    return (await this.jobs.find(scopeOf(principal), id)) ?? Promise.reject(notFound("job"));
  }
}
