// The page behind an email channel's confirmation link (api.md "Alerts and notification channels").
// No API key: the token authenticates (src/alerts/channel-confirmations.ts). Opening the link (GET)
// only shows a button; pressing it POSTs the same URL, which confirms. Mail scanners and link
// previews open links, they do not submit forms: they confirm nothing.
import { Controller, Get, HttpCode, Post, Query, Req, Res } from "@nestjs/common";
import {
  ApiBadRequestResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
  ApiTooManyRequestsResponse,
} from "@nestjs/swagger";
import type { FastifyReply, FastifyRequest } from "fastify";
import { ChannelConfirmations, CONFIRM_PATH } from "./channel-confirmations.js";

const HTML = { "text/html": { schema: { type: "string" } } };
const TOKEN_QUERY = { name: "token", required: true, description: "the token of the mailed link" } as const;
const INVALID = {
  description: "invalid_token: unknown, already used, replaced by a newer link, or expired (7 days)",
} as const;
const OVER_BUDGET = {
  description:
    "rate_limited: this address is over PREAUTH_FAILURE_LIMIT failed authentications per minute (a valid token is never refused); Retry-After says when to retry",
} as const;

@ApiTags("alerts")
@Controller(CONFIRM_PATH.slice(1))
export class ChannelConfirmationController {
  constructor(private readonly confirmations: ChannelConfirmations) {}

  @ApiOperation({
    description:
      "The page behind an e-mail channel's confirmation link: a button that POSTs the same URL; opening it confirms nothing.",
  })
  @Get()
  @ApiQuery(TOKEN_QUERY)
  @ApiOkResponse({
    description: "a short HTML page whose button POSTs this URL; confirms nothing by itself",
    content: HTML,
  })
  @ApiBadRequestResponse(INVALID)
  @ApiTooManyRequestsResponse(OVER_BUDGET)
  async page(
    @Query("token") token: unknown,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await this.confirmations.check(token, request.ip);
    const action = `?token=${encodeURIComponent(token as string)}`;
    await html(
      reply,
      `<p>Leadgate will send alerts to this address once you confirm.</p>
<form method="post" action="${escape(action)}"><button type="submit">Confirm this address</button></form>`,
    );
  }

  @ApiOperation({
    description: "Confirms the e-mail channel of the token: it becomes active and receives alerts.",
  })
  @Post()
  @HttpCode(200)
  @ApiQuery(TOKEN_QUERY)
  @ApiOkResponse({
    description: "the channel is confirmed (active): a short HTML page saying so",
    content: HTML,
  })
  @ApiBadRequestResponse(INVALID)
  @ApiTooManyRequestsResponse(OVER_BUDGET)
  async confirm(
    @Query("token") token: unknown,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await this.confirmations.confirm(token, request.ip);
    await html(reply, "<p>Address confirmed: Leadgate will send alerts here. You can close this page.</p>");
  }
}

/**
 * The page: no script, no framing, forms only to this origin; not cached, and no Referer carries
 * the token on.
 */
async function html(reply: FastifyReply, body: string): Promise<void> {
  await reply
    .status(200)
    .header("cache-control", "no-store")
    .header("referrer-policy", "no-referrer")
    .header("content-security-policy", "default-src 'none'; form-action 'self'; frame-ancestors 'none'")
    .type("text/html; charset=utf-8")
    .send(
      `<!doctype html><html><head><meta charset="utf-8"><title>Leadgate</title></head><body>${body}</body></html>\n`,
    );
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
