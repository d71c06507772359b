import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from "@nestjs/common";
import {
  ApiAcceptedResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnprocessableEntityResponse,
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
  RotatedCrmSecret,
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

const PASTED_OR_CAPPED =
  "`limit_reached`: the tenant has MAX_CONNECTIONS_PER_TENANT connections; `account_not_accessible`: a tenant-admin's pasted credentials do not reach the account; nothing written";
const PROVIDER_UNAVAILABLE =
  "`provider_unavailable`: the provider could not be asked whether pasted credentials reach the account; `unavailable`: the database; Retry-After";

@ApiTags("connections")
@AdminApi()
@Controller("admin/connections")
export class ConnectionsController {
  constructor(
    private readonly connections: ConnectionsAdminService,
    private readonly syncs: ConnectionSync,
    private readonly previews: ReplyPreviews,
  ) {}

  @ApiOperation({
    description:
      "Creates a connection of a provider account to a tenant; its webhook URL and generated secrets are returned once.",
  })
  @Post()
  @HttpCode(201)
  @ApiCreatedResponse({
    description:
      '`{ connection, webhookUrl, secrets, warnings }`: the secrets are shown this once; `warnings: ["apiKey_only"]` for a Static Forms apiKey connection',
    type: CreatedConnection,
  })
  @ApiConflictResponse({ description: "`connection_exists`: an active connection holds the account" })
  @ApiUnprocessableEntityResponse({ description: PASTED_OR_CAPPED })
  @ApiServiceUnavailableResponse({ description: PROVIDER_UNAVAILABLE })
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateConnectionBody) {
    return this.connections.create(principal, body);
  }

  @ApiOperation({
    description: "Lists the connections of the caller's scope, newest first; secrets are never shown.",
  })
  @Get()
  @ApiOkResponse({ type: PageOf(ConnectionView) })
  list(@CurrentPrincipal() principal: Principal, @Query() query: ConnectionsQuery) {
    return this.connections.list(scopeOf(principal), query);
  }

  @ApiOperation({
    description:
      "Reads one connection with its OAuth, registration and reconciliation state and its effective settings; secrets are never shown.",
  })
  @Get(":id")
  @ApiOkResponse({ type: ConnectionView })
  get(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    return this.connections.get(scopeOf(principal), id);
  }

  @ApiOperation({
    description:
      "Updates a connection's display name, inbound authentication, credentials or settings (each given setting replaces the stored one; null returns it to inheriting).",
  })
  @Patch(":id")
  @ApiOkResponse({
    description:
      "`{ connection, secrets }`: secrets holds a new CRM signing secret, once, if one was created",
    type: UpdatedConnection,
  })
  @ApiConflictResponse({ description: "`connection_disabled`" })
  @ApiUnprocessableEntityResponse({ description: PASTED_OR_CAPPED })
  @ApiServiceUnavailableResponse({ description: PROVIDER_UNAVAILABLE })
  update(
    @CurrentPrincipal() principal: Principal,
    @Param("id", IdPipe) id: string,
    @Body() body: UpdateConnectionBody,
  ) {
    return this.connections.update(principal, scopeOf(principal), id, body);
  }

  @ApiOperation({
    description: "Pauses a connection: deliveries are still stored, their jobs held until resume.",
  })
  @Post(":id/pause")
  @HttpCode(200)
  @ApiOkResponse({
    description: "`{ connection }`: paused (deliveries are stored, their jobs held)",
    type: ConnectionAnswer,
  })
  @ApiConflictResponse({ description: "`connection_disabled`" })
  pause(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    return this.connections.pause(principal, scopeOf(principal), id);
  }

  @ApiOperation({ description: "Resumes a connection: its held and blocked jobs are queued again." })
  @Post(":id/resume")
  @HttpCode(200)
  @ApiOkResponse({
    description: "`{ connection, requeuedJobs }`: held and blocked jobs are queued again",
    type: ResumedConnection,
  })
  @ApiConflictResponse({ description: "`connection_disabled`" })
  resume(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    return this.connections.resume(principal, scopeOf(principal), id);
  }

  @ApiOperation({
    description:
      "Rotates the connection's inbound secret; the old secret keeps working for the grace period (default 24 h).",
  })
  @Post(":id/rotate-secret")
  @HttpCode(200)
  @ApiOkResponse({
    description: "`{ secrets, webhookUrl }`: the new secrets, shown this once",
    type: RotatedSecrets,
  })
  @ApiConflictResponse({
    description: "`connection_disabled`, `nothing_to_rotate` (Yelp: the platform URL token)",
  })
  rotateSecret(
    @CurrentPrincipal() principal: Principal,
    @Param("id", IdPipe) id: string,
    @Body() body: RotateSecretBody,
  ) {
    return this.connections.rotateSecret(principal, scopeOf(principal), id, body);
  }

  @ApiOperation({
    description:
      "Rotates the CRM signing secret; during the grace period (default 24 h) each CRM delivery carries both signatures.",
  })
  @Post(":id/rotate-crm-secret")
  @HttpCode(200)
  @ApiOkResponse({
    description:
      "`{ secrets: { crmSigningSecret } }`, shown this once; CRM deliveries carry the old secret's signature too during the grace period",
    type: RotatedCrmSecret,
  })
  @ApiConflictResponse({ description: "`no_crm_destination`, `connection_disabled`" })
  rotateCrmSecret(
    @CurrentPrincipal() principal: Principal,
    @Param("id", IdPipe) id: string,
    @Body() body: RotateCrmSecretBody,
  ) {
    return this.connections.rotateCrmSecret(principal, scopeOf(principal), id, body);
  }

  @ApiOperation({
    description: "Ends a rotation's grace period now: a leaked old secret stops working at once.",
  })
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

  @ApiOperation({
    description:
      "Runs registration and reconciliation for this connection now; a call while a run is queued joins it.",
  })
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

  @ApiOperation({
    description:
      "Renders the first reply a lead (or a sample lead) would get at a given time, with the saved or an unsaved template; writes nothing.",
  })
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

  @ApiOperation({
    description:
      "Disables a connection (deliveries answer 410) and removes its provider webhook where the provider offers it; history is kept.",
  })
  @Delete(":id")
  @HttpCode(204)
  @ApiNoContentResponse({ description: "disabled; deliveries answer 410, history is kept" })
  disable(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    return this.connections.disable(principal, scopeOf(principal), id);
  }
}
