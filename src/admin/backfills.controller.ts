// The backfill routes (api.md): start one (or count, dry run) and read its progress.
import { Body, Controller, Get, Param, Post, Res } from "@nestjs/common";
import {
  ApiAcceptedResponse,
  ApiBadGatewayResponse,
  ApiConflictResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnprocessableEntityResponse,
} from "@nestjs/swagger";
import type { FastifyReply } from "fastify";
import { AdminApi } from "../auth/api-key.guard.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { type Principal, scopeOf } from "../auth/principal.js";
import {
  BackfillBody,
  BackfillCount,
  BackfillProgress,
  BackfillRunning,
  BackfillsService,
} from "../reconciliation/backfills.js";
import { IdPipe } from "../common/id.pipe.js";

@ApiTags("connections")
@AdminApi()
@Controller("admin")
export class BackfillsController {
  constructor(private readonly backfills: BackfillsService) {}

  @ApiOperation({
    description:
      'Pulls the provider\'s leads of a window through the normal ingest path (receipts with `source: "backfill"`), or counts them (dry run).',
  })
  @Post("connections/:id/backfill")
  @ApiOkResponse({ description: "dry run counted within 10 s: `{ matched }`", type: BackfillCount })
  @ApiAcceptedResponse({
    description:
      "`{ id, matched }`: the backfill runs as a job, or a dry run's count goes on in the worker (`matched: null`, status `counting`); progress at GET /admin/backfills/{id}",
    type: BackfillRunning,
  })
  @ApiUnprocessableEntityResponse({
    description: "`backfill_not_available`: the provider offers no list of leads (Static Forms)",
  })
  @ApiTooManyRequestsResponse({
    description: "`provider_quota` (a dry run's count): the provider's call budget is spent; Retry-After",
  })
  @ApiBadGatewayResponse({
    description: "`provider_error` (a dry run's count): the provider's list of leads could not be read",
  })
  @ApiConflictResponse({ description: "`backfill_in_progress`, `connection_disabled`, `credential_error`" })
  async start(
    @CurrentPrincipal() principal: Principal,
    @Param("id", IdPipe) id: string,
    @Body() body: BackfillBody,
    @Res({ passthrough: true }) reply: FastifyReply,
  ) {
    const started = await this.backfills.start(principal, scopeOf(principal), id, body);
    void reply.status(started.status);
    return started.body;
  }

  @ApiOperation({
    description: "A backfill's progress: its status and the leads matched, ingested and found duplicate.",
  })
  @Get("backfills/:id")
  @ApiOkResponse({
    description: "`{ id, connectionId, status, matched, ingested, duplicates, error? }`",
    type: BackfillProgress,
  })
  get(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    return this.backfills.find(scopeOf(principal), id);
  }
}
