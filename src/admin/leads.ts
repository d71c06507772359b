// Leads: the tenant's lead store, with each lead's messages and events.
import { Body, Controller, Get, HttpCode, Param, Post, Query } from "@nestjs/common";
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiProperty, ApiTags } from "@nestjs/swagger";
import { listScope } from "../auth/list-filters.js";
import { AdminApi } from "../auth/api-key.guard.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { type Principal, scopeOf } from "../auth/principal.js";
import { IdPipe, notFound } from "../common/id.pipe.js";
import { LeadMarkReplied, MarkRepliedBody } from "./lead-mark-replied.js";
import { ListReads } from "../auth/list-reads.js";
import { type Page, PageOf, toPage } from "../common/pagination.js";
import { LeadsQuery, LeadView, LeadDetail, LeadsAdminRepository } from "../leads/lead-reads.js";

export class MarkedReplied {
  @ApiProperty({ type: () => LeadDetail, description: "the lead with its first response" })
  lead!: LeadDetail;
}

@ApiTags("leads")
@AdminApi()
@Controller("admin/leads")
export class LeadsController {
  constructor(
    private readonly leads: LeadsAdminRepository,
    private readonly marks: LeadMarkReplied,
    private readonly reads: ListReads,
  ) {}

  @ApiOperation({
    description: "Lists leads, newest first, filtered by connection, provider or a search text.",
  })
  @Get()
  @ApiOkResponse({ type: PageOf(LeadView) })
  async list(@CurrentPrincipal() principal: Principal, @Query() query: LeadsQuery): Promise<Page<LeadView>> {
    const scope = listScope(principal, query.tenantId);
    return toPage(
      await this.reads.run(principal, (db) => this.leads.list(scope, query, db)),
      query,
      (row) => row.createdAt,
    );
  }

  @ApiOperation({ description: "Reads one lead with its messages and events, and its first response." })
  @Get(":id")
  @ApiOkResponse({ description: "the lead with its messages and events, oldest first", type: LeadDetail })
  async get(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string): Promise<LeadDetail> {
    return (await this.leads.find(scopeOf(principal), id)) ?? Promise.reject(notFound("lead"));
  }

  @ApiOperation({
    description:
      "Records that the business answered the lead outside the provider (its first response unless an earlier one exists), and tells Yelp where it can.",
  })
  @Post(":id/mark-replied")
  @HttpCode(202)
  @ApiAcceptedResponse({
    description:
      "`{ lead }`: the business answered outside the provider; its first response is recorded unless an earlier one exists, and Yelp is told (provider-mark-replied, one job per lead)",
    type: MarkedReplied,
  })
  async markReplied(
    @CurrentPrincipal() principal: Principal,
    @Param("id", IdPipe) id: string,
    @Body() body: MarkRepliedBody,
  ) {
    await this.marks.mark(principal, scopeOf(principal), id, body);
    return { lead: await this.leads.find(scopeOf(principal), id) };
  }
}
