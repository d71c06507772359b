import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from "@nestjs/common";
import {
  ApiAcceptedResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
} from "@nestjs/swagger";
import { AdminApi } from "../../auth/api-key.guard.js";
import { CurrentPrincipal } from "../../auth/current-principal.js";
import { type Principal, scopeOf } from "../../auth/principal.js";
import { IdPipe } from "../../common/id.pipe.js";
import { PageOf } from "../../common/pagination.js";
import {
  ConnectionAnswer,
  CreatedConnection,
  ResumedConnection,
  RotatedSecrets,
  UpdatedConnection,
} from "./connection-answers.js";
import { ConnectionSync, SyncAnswer } from "./connection-sync.js";
import { ConnectionView } from "./connection-view.js";
import { ConnectionsAdminService } from "./connections-admin.service.js";
import { ReplyPreview, ReplyPreviews } from "./reply-preview.js";
import {
  ConnectionsQuery,
  CreateConnectionBody,
  ReplyPreviewBody,
  RotateCrmSecretBody,
  RotateSecretBody,
  UpdateConnectionBody,
} from "../../connections/connections.dto.js";

@ApiTags("connections")
@AdminApi()
@Controller("admin/connections")
export class ConnectionsController {
  constructor(
    private readonly connections: ConnectionsAdminService,
    private readonly syncs: ConnectionSync,
    private readonly previews: ReplyPreviews,
  ) {}

  @Post()
  @HttpCode(201)
  @ApiCreatedResponse({
    description:
      '`{ connection, webhookUrl, secrets, warnings }`: the secrets are shown this once; `warnings: ["apiKey_only"]` for a Static Forms apiKey connection',
    type: CreatedConnection,
  })
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateConnectionBody) {
    return this.connections.create(principal, body);
  }

  @Get()
  @ApiOkResponse({ type: PageOf(ConnectionView) })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ConnectionsQuery) {
    return this.connections.list(scopeOf(principal), query);
  }

  @Get(":id")
  @ApiOkResponse({ type: ConnectionView })
  get(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    return this.connections.get(scopeOf(principal), id);
  }

  @Patch(":id")
  @ApiOkResponse({
    description:
      "`{ connection, secrets }`: secrets holds a new CRM signing secret, once, if one was created",
    type: UpdatedConnection,
  })
  update(
    @CurrentPrincipal() principal: Principal,
    @Param("id", IdPipe) id: string,
    @Body() body: UpdateConnectionBody,
  ) {
    return this.connections.update(principal, scopeOf(principal), id, body);
  }

  @Post(":id/pause")
  @HttpCode(200)
  @ApiOkResponse({
    description: "`{ connection }`: paused (deliveries are stored, their jobs held)",
    type: ConnectionAnswer,
  })
  pause(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    return this.connections.pause(principal, scopeOf(principal), id);
  }

  @Post(":id/resume")
  @HttpCode(200)
  @ApiOkResponse({
    description: "`{ connection, requeuedJobs }`: held and blocked jobs are queued again",
    type: ResumedConnection,
  })
  resume(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    return this.connections.resume(principal, scopeOf(principal), id);
  }

  @Post(":id/rotate-secret")
  @HttpCode(200)
  @ApiOkResponse({
    description: "`{ secrets, webhookUrl }`: the new secrets, shown this once",
    type: RotatedSecrets,
  })
  rotateSecret(
    @CurrentPrincipal() principal: Principal,
    @Param("id", IdPipe) id: string,
    @Body() body: RotateSecretBody,
  ) {
    return this.connections.rotateSecret(principal, scopeOf(principal), id, body);
  }

  @Post(":id/rotate-crm-secret")
  @HttpCode(200)
  @ApiOkResponse({
    description:
      "`{ secrets: { crmSigningSecret } }`, shown this once; CRM deliveries carry the old secret's signature too during the grace period",
  })
  @ApiConflictResponse({ description: "`no_crm_destination`, `connection_disabled`" })
  rotateCrmSecret(
    @CurrentPrincipal() principal: Principal,
    @Param("id", IdPipe) id: string,
    @Body() body: RotateCrmSecretBody,
  ) {
    return this.connections.rotateCrmSecret(principal, scopeOf(principal), id, body);
  }

  @Post(":id/revoke-previous-secret")
  @HttpCode(200)
  @ApiOkResponse({
    description:
      "`{ connection }`: ends the grace periods of the last rotate-secret and rotate-crm-secret now",
    type: ConnectionAnswer,
  })
  @ApiConflictResponse({ description: "`connection_disabled`" })
  revokePreviousSecret(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    return this.connections.revokePreviousSecret(principal, scopeOf(principal), id);
  }

  @Post(":id/sync")
  @HttpCode(202)
  @ApiAcceptedResponse({
    description:
      '`{ connection, run: { id, status: "queued" | "running", coalesced } }`: a run of registration and reconciliation of this connection; a call while one is queued joins it (`coalesced: true`); a call while one is running makes one follow-up run, queued until the running one ended, which later calls join; `registration` shows the outcome',
    type: SyncAnswer,
  })
  @ApiConflictResponse({ description: "`connection_disabled`, `sync_not_supported` (Static Forms)" })
  @ApiTooManyRequestsResponse({
    description:
      "`rate_limited` (with Retry-After): this route made 6 runs of the connection (follow-ups included) in the last 60 s",
  })
  sync(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    return this.syncs.sync(principal, scopeOf(principal), id);
  }

  @Post(":id/reply-preview")
  @HttpCode(200)
  @ApiOkResponse({
    description:
      '`{ text, variant: "business-hours" | "after-hours", sendAt }`: the first reply for the lead (or a sample lead) arriving at `at`, with the given or the saved auto-response; writes nothing',
    type: ReplyPreview,
  })
  @ApiConflictResponse({ description: "`no_auto_response`, `no_reply_channel` (Static Forms)" })
  replyPreview(
    @CurrentPrincipal() principal: Principal,
    @Param("id", IdPipe) id: string,
    @Body() body: ReplyPreviewBody,
  ) {
    return this.previews.preview(scopeOf(principal), id, body);
  }

  @Delete(":id")
  @HttpCode(204)
  @ApiNoContentResponse({ description: "disabled; deliveries answer 410, history is kept" })
  disable(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    return this.connections.disable(principal, scopeOf(principal), id);
  }
}
