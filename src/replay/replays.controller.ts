// Replay routes (api.md): one job, one receipt, or a filtered bulk replay with dry run and progress.
import { Body, Controller, Get, HttpCode, Param, Post, Res } from "@nestjs/common";
import {
  ApiAcceptedResponse,
  ApiConflictResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
  IntersectionType,
  PickType,
} from "@nestjs/swagger";
import { Type } from "class-transformer";
import {
  IsBoolean,
  IsDefined,
  IsIn,
  IsInt,
  IsObject,
  IsUUID,
  Max,
  Min,
  ValidateNested,
} from "class-validator";
import type { FastifyReply } from "fastify";
import { AdminApi } from "../auth/api-key.guard.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { type Principal, scopeOf } from "../auth/principal.js";
import { REPLAYABLE, type ReplayableStatus } from "../jobs/state/job-states.js";
import { ownTenant } from "../tenants/tenants.repository.js";
import { IdPipe } from "../common/id.pipe.js";
import { JobsQuery } from "../jobs/job-reads.js";
import { ReceiptsQuery } from "../ingestion/receipt-reads.js";
import { BatchStatus, ReplayCreated, ReplayedJob, ReplayedReceipt, ReplayPreview } from "./replay-answers.js";
import { ReplayService } from "./replay.service.js";
import { Optional } from "../common/validation.js";

export class ReplayJobBody {
  @ApiPropertyOptional({ description: "also replay a job that succeeded" })
  @Optional()
  @IsBoolean()
  force?: boolean;
}

/** The jobs a bulk replay takes: the job list's filters (from, to: job creation), plus the receipt's provider. */
export class ReplayFilter extends IntersectionType(
  PickType(JobsQuery, ["operation", "connectionId", "errorCode", "from", "to"] as const),
  PickType(ReceiptsQuery, ["provider"] as const),
) {
  @ApiPropertyOptional({ enum: REPLAYABLE, default: "dead" })
  @Optional()
  @IsIn(REPLAYABLE)
  status?: ReplayableStatus;

  @ApiPropertyOptional({ format: "uuid", description: "operators: only this tenant's jobs" })
  @Optional()
  @IsUUID()
  tenantId?: string;
}

export class BulkReplayBody {
  @ApiProperty({ type: ReplayFilter })
  @IsDefined()
  @IsObject()
  @ValidateNested()
  @Type(() => ReplayFilter)
  filter!: ReplayFilter;

  @ApiPropertyOptional({ description: "count and sample the matching jobs; change nothing" })
  @Optional()
  @IsBoolean()
  dryRun?: boolean;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: 100_000,
    default: 10_000,
    description: "at most this many jobs, oldest first",
  })
  @Optional()
  @IsInt()
  @Min(1)
  @Max(100_000)
  limit?: number;
}

@ApiTags("replay")
@AdminApi()
@Controller("admin")
export class ReplaysController {
  constructor(private readonly replay: ReplayService) {}

  @ApiOperation({
    description:
      "Replays one job under the same job key, from dead, blocked or cancelled (and succeeded with `force`).",
  })
  @Post("jobs/:id/replay")
  @HttpCode(202)
  @ApiAcceptedResponse({ description: "`{ job }`: queued again under the same job key", type: ReplayedJob })
  @ApiConflictResponse({
    description:
      "job_in_progress (queued, running, retrying, waiting), job_held, job_succeeded (without force)",
  })
  async replayJob(
    @CurrentPrincipal() principal: Principal,
    @Param("id", IdPipe) id: string,
    @Body() body: ReplayJobBody,
  ): Promise<ReplayedJob> {
    return { job: await this.replay.replayJob(principal, scopeOf(principal), id, body.force ?? false) };
  }

  @ApiOperation({ description: "Replays the receipt's jobs that did not succeed." })
  @Post("receipts/:id/replay")
  @HttpCode(202)
  @ApiAcceptedResponse({
    description: "`{ jobs }`: the receipt's dead, blocked and cancelled jobs, queued again",
    type: ReplayedReceipt,
  })
  async replayReceipt(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    return { jobs: await this.replay.replayReceipt(principal, scopeOf(principal), id) };
  }

  @ApiOperation({
    description:
      "Replays the jobs a filter matches, paced in the background, or counts and samples them (dry run).",
  })
  @Post("replays")
  @ApiOkResponse({ description: "dry run: `{ matched, sample }`", type: ReplayPreview })
  @ApiAcceptedResponse({
    description: "`{ id, matched }`: the batch runs in the background, paced",
    type: ReplayCreated,
  })
  async bulk(
    @CurrentPrincipal() principal: Principal,
    @Body() body: BulkReplayBody,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<ReplayPreview | ReplayCreated> {
    const scope = scopeOf(principal);
    const { status, ...rest } = body.filter;
    if (principal.role !== "operator") ownTenant(principal, rest.tenantId);
    const filter = { ...rest, statuses: [status ?? "dead"] };
    const limit = body.limit ?? 10_000;
    if (body.dryRun === true) {
      void reply.status(200);
      return this.replay.preview(scope, filter, limit);
    }
    void reply.status(202);
    return this.replay.createBatch(principal, scope, filter, limit);
  }

  @ApiOperation({ description: "A bulk replay's progress: matched, queued, skipped, succeeded and failed." })
  @Get("replays/:id")
  @ApiOkResponse({
    description: "`{ id, status, matched, queued, skipped, succeeded, failed }`",
    type: BatchStatus,
  })
  progress(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string): Promise<BatchStatus> {
    return this.replay.progress(scopeOf(principal), id);
  }
}
