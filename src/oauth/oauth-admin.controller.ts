import { Body, Controller, HttpCode, Param, Post } from "@nestjs/common";
import {
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiOperation,
  ApiResponse,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from "@nestjs/swagger";
import { IdPipe } from "../common/id.pipe.js";
import { AdminApi } from "../auth/api-key.guard.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { type Principal, scopeOf } from "../auth/principal.js";
import { OAuthStarted, ReconnectBody, StartOAuthBody } from "./oauth.dto.js";
import { OAuthService } from "./oauth.service.js";

const STARTED =
  "`{ authorizeUrl, expiresAt }`: send the owner's browser to authorizeUrl; the attempt is single-use and expires after 10 minutes";
const NOT_CONFIGURED = { status: 501, description: "`oauth_not_configured`: no client id for the provider" };

@ApiTags("connections")
@AdminApi()
@Controller("admin/connections")
export class OAuthAdminController {
  constructor(private readonly oauth: OAuthService) {}

  @ApiOperation({
    description:
      "Starts connecting a Yelp or Thumbtack account with OAuth: send the owner's browser to `authorizeUrl` (single use, 10 minutes).",
  })
  @Post("oauth")
  @HttpCode(201)
  @ApiCreatedResponse({ description: STARTED, type: OAuthStarted })
  @ApiUnprocessableEntityResponse({
    description: "`limit_reached`: the tenant has MAX_CONNECTIONS_PER_TENANT connections; nothing written",
  })
  @ApiResponse(NOT_CONFIGURED)
  start(@CurrentPrincipal() principal: Principal, @Body() body: StartOAuthBody): Promise<OAuthStarted> {
    return this.oauth.start(principal, body);
  }

  @ApiOperation({
    description:
      "Starts the consent again for an existing connection (e.g. after `reauthorization_required`); it keeps its id, webhook URL, settings and history.",
  })
  @Post(":id/reconnect")
  @HttpCode(201)
  @ApiCreatedResponse({
    description: `${STARTED}; the connection keeps its id, webhook URL, settings and history`,
    type: OAuthStarted,
  })
  @ApiConflictResponse({ description: "`connection_disabled`, `oauth_not_supported` (Static Forms)" })
  @ApiResponse(NOT_CONFIGURED)
  reconnect(
    @CurrentPrincipal() principal: Principal,
    @Param("id", IdPipe) id: string,
    @Body() body: ReconnectBody,
  ): Promise<OAuthStarted> {
    return this.oauth.reconnect(principal, scopeOf(principal), id, body);
  }
}
