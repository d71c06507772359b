import { Controller, Get, Param, Query, Req, Res } from "@nestjs/common";
import {
  ApiBadRequestResponse,
  ApiFoundResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
} from "@nestjs/swagger";
import type { FastifyReply, FastifyRequest } from "fastify";
import { ERROR_SCHEMA_REF } from "../observability/openapi-responses.js";
import { type CallbackOutcome, OAuthService } from "./oauth.service.js";

const HTML = { "text/html": { schema: { type: "string" } } };

/** The provider's redirect after the consent screen: no API key, the `state` authenticates. */
@ApiTags("oauth")
@Controller("oauth")
export class OAuthCallbackController {
  constructor(private readonly oauth: OAuthService) {}

  @ApiOperation({
    description:
      "The provider's redirect after the consent screen: exchanges the code, proves the grant reaches the account, creates or updates the connection, then redirects to `returnUrl` (or shows a short page).",
  })
  @Get(":provider/callback")
  @ApiFoundResponse({
    description:
      "to returnUrl with `connectionId` and `status=connected`, or `status=error&error=` access_denied, token_exchange_failed, account_not_accessible, account_taken",
  })
  @ApiOkResponse({ description: "without returnUrl: a short HTML page stating the result", content: HTML })
  @ApiBadRequestResponse({
    description:
      "`invalid_oauth_state`: forged, reused or expired, or its API key revoked; nothing written (JSON); without returnUrl, a failed connection's short HTML page",
    content: { "application/json": { schema: { $ref: ERROR_SCHEMA_REF } }, ...HTML },
  })
  @ApiNotFoundResponse({ description: "`not_found`: no such OAuth provider" })
  @ApiResponse({ status: 501, description: "`oauth_not_configured`: no client id for the provider" })
  @ApiTooManyRequestsResponse({
    description:
      "rate_limited: this address is over PREAUTH_FAILURE_LIMIT failed authentications per minute (a valid state is never refused); Retry-After says when to retry",
  })
  async callback(
    @Param("provider") provider: string,
    @Query() query: Record<string, unknown>,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const outcome = await this.oauth.callback(provider, query, request.ip);
    // The request URL held the code: no Referer carries it on.
    void reply.header("referrer-policy", "no-referrer").header("cache-control", "no-store");
    if (outcome.returnUrl !== null) {
      await reply.redirect(resultUrl(outcome.returnUrl, outcome), 302);
      return;
    }
    await reply
      .status(outcome.status === "connected" ? 200 : 400)
      .header("content-security-policy", "default-src 'none'")
      .type("text/html; charset=utf-8")
      .send(page(outcome));
  }
}

/** `returnUrl` with the outcome added to its query. */
function resultUrl(returnUrl: string, outcome: CallbackOutcome): string {
  const url = new URL(returnUrl);
  if (outcome.status === "connected") url.searchParams.set("connectionId", outcome.connectionId);
  url.searchParams.set("status", outcome.status);
  if (outcome.status === "error") url.searchParams.set("error", outcome.error);
  return url.toString();
}

const MESSAGES: Record<string, string> = {
  access_denied: "Access was not granted.",
  authorization_failed: "The provider did not authorize the connection.",
  token_exchange_failed: "The provider did not issue a token. Please try again.",
  account_not_accessible: "The account that granted access cannot reach this business.",
  account_taken: "This business is already connected elsewhere.",
  provider_unavailable: "The provider could not be reached. Please try again.",
  connection_disabled: "This connection was disabled meanwhile.",
};

function page(outcome: CallbackOutcome): string {
  const text =
    outcome.status === "connected"
      ? `Connected. Connection id: ${outcome.connectionId}. You can close this page.`
      : `Not connected (${outcome.error}): ${MESSAGES[outcome.error] ?? ""}`;
  const escaped = text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html><html><head><meta charset="utf-8"><title>Leadgate</title></head><body><p>${escaped}</p></body></html>\n`;
}
