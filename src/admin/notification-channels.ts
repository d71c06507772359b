// Notification channels (api.md "Alerts and notification channels"): where alerts are sent. A
// tenant-admin's channel is its tenant's; an operator names the tenant, or makes a platform channel
// (no tenantId) that receives every tenant's alerts. The actions are in notification-channels.service.ts.
import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from "@nestjs/common";
import {
  ApiAcceptedResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiPropertyOptional,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnprocessableEntityResponse,
} from "@nestjs/swagger";
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsEmail,
  IsIn,
  IsString,
  IsUrl,
  IsUUID,
  MaxLength,
} from "class-validator";
import { ALERT_TYPES, type AlertType, CHANNEL_TYPES, type ChannelType } from "../alerts/alert-types.js";
import { NotificationChannels } from "../alerts/notification-channels.repository.js";
import { listScope, TenantListQuery } from "../auth/list-filters.js";
import { AdminApi } from "../auth/api-key.guard.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import type { Principal } from "../auth/principal.js";
import { NoNul, NotMasked, Optional } from "../common/validation.js";
import { IdPipe } from "../common/id.pipe.js";
import { RESENDS_PER_HOUR, TESTS_PER_MINUTE } from "../alerts/notification-channel-limits.js";
import {
  ChannelAnswer,
  ChannelView,
  channelView,
  CreatedChannel,
  NotificationChannelsAdminService,
  TestOutcome,
} from "../alerts/notification-channels.service.js";
import { type Page, PageOf, positionAfter, toPage } from "../common/pagination.js";

export class CreateChannelBody {
  @ApiProperty({ enum: CHANNEL_TYPES, description: "where alerts go: a signed webhook, Slack, or e-mail" })
  @IsIn(CHANNEL_TYPES)
  type!: ChannelType;

  @ApiPropertyOptional({
    description: "webhook and slack: where to POST (views show its query string masked: `?…`)",
  })
  @Optional()
  @IsString()
  @MaxLength(2048)
  @IsUrl({ protocols: ["http", "https"], require_protocol: true, require_tld: false })
  @NotMasked()
  url?: string;

  @ApiPropertyOptional({ description: "email: the recipient" })
  @Optional()
  @IsString()
  @MaxLength(320)
  @NoNul()
  @IsEmail()
  address?: string;

  @ApiPropertyOptional({
    enum: ALERT_TYPES,
    isArray: true,
    description: "the alert types it receives (default: all)",
  })
  @Optional()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(ALERT_TYPES.length)
  @IsIn(ALERT_TYPES, { each: true })
  types?: AlertType[];

  @ApiPropertyOptional({
    format: "uuid",
    description: "operators: the tenant (without it: a platform channel)",
  })
  @Optional()
  @IsUUID()
  tenantId?: string;
}

@ApiTags("alerts")
@AdminApi()
@Controller("admin/notification-channels")
export class NotificationChannelsController {
  constructor(
    private readonly channels: NotificationChannels,
    private readonly service: NotificationChannelsAdminService,
  ) {}

  @ApiOperation({
    description:
      "Creates a notification channel (webhook, Slack or e-mail) that receives alerts; a webhook channel's signing secret is returned once.",
  })
  @Post()
  @HttpCode(201)
  @ApiCreatedResponse({
    description:
      "`{ channel, secrets? }`: a webhook channel's `whsec_` signing secret, shown this once; an email channel is `pending_confirmation` and its address is mailed a confirmation link",
    type: CreatedChannel,
  })
  @ApiUnprocessableEntityResponse({
    description: "limit_reached: the tenant has MAX_CHANNELS_PER_TENANT channels; nothing written",
  })
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateChannelBody) {
    return this.service.create(principal, body);
  }

  @ApiOperation({ description: "Lists the notification channels of the caller's scope, newest first." })
  @Get()
  @ApiOkResponse({ type: PageOf(ChannelView) })
  async list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: TenantListQuery,
  ): Promise<Page<ChannelView>> {
    const rows = await this.channels.list(listScope(principal, query.tenantId), {
      take: query.limit + 1,
      after: positionAfter(query),
    });
    const page = toPage(rows, query, (row) => row.createdAt);
    return { items: page.items.map(channelView), nextCursor: page.nextCursor };
  }

  @ApiOperation({ description: "Deletes a notification channel." })
  @Delete(":id")
  @HttpCode(204)
  @ApiNoContentResponse({ description: "deleted; its pending notifications send nothing" })
  delete(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    return this.service.delete(principal, id);
  }

  @ApiOperation({ description: "Sends one test notification to the channel and answers with its outcome." })
  @Post(":id/test")
  @HttpCode(200)
  @ApiOkResponse({
    description:
      "`{ delivered, status?, error? }`: one test notification was sent and this is its outcome (waiting at most SIDE_EFFECT_TIMEOUT_MS); `status` is the receiver's HTTP status or SMTP reply code when it refused",
    type: TestOutcome,
  })
  @ApiConflictResponse({ description: "channel_pending: an email channel whose address has not confirmed" })
  @ApiTooManyRequestsResponse({
    description: `rate_limited: ${TESTS_PER_MINUTE} test notifications a minute per channel; Retry-After says when to retry`,
  })
  test(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    return this.service.test(principal, id);
  }

  @ApiOperation({
    description: "Mails a new confirmation link to an e-mail channel's address; the old one stops working.",
  })
  @Post(":id/resend-confirmation")
  @HttpCode(202)
  @ApiAcceptedResponse({
    description:
      "`{ channel }`: a new confirmation link was mailed to the address; the old one stops working",
    type: ChannelAnswer,
  })
  @ApiConflictResponse({ description: "channel_not_pending: the channel has no confirmation pending" })
  @ApiTooManyRequestsResponse({
    description: `rate_limited: ${RESENDS_PER_HOUR} resends an hour per channel; Retry-After says when to retry`,
  })
  resendConfirmation(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    return this.service.resendConfirmation(principal, id);
  }
}
