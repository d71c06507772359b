// Notification channels (api.md "Alerts and notification channels"): where alerts are sent. A
// tenant-admin's channel is its tenant's; an operator names the tenant, or makes a platform channel
// (no tenantId) that receives every tenant's alerts.
import { CONFIG, type AlertsConfig, type HttpConfig } from "../config/sections.js";
import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Inject,
  Injectable,
  Logger,
  Param,
  Post,
  Query,
} from "@nestjs/common";
import {
  ApiAcceptedResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiPropertyOptional,
  ApiTags,
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
import { type ChannelView, NotificationChannels } from "../alerts/notification-channels.repository.js";
import { AdminApi } from "../auth/api-key.guard.js";
import { CurrentPrincipal } from "../auth/current-principal.js";
import { PLATFORM, type Principal, scopeOf } from "../auth/principal.js";
import { AppError } from "../common/app-error.js";
import { DestinationGuard } from "../common/outbound/destination-guard.js";
import { classify } from "../common/outbound/errors.js";
import { NoNul, Optional } from "../common/validation.js";
import { Transactions } from "../database/transactions.js";
import { NotificationSender } from "../alerts/notifications/notification-sender.js";
import { testAlert } from "../alerts/notifications/notification-message.js";
import { AuditRepository } from "./audit.js";
import { IdPipe, notFound } from "./id.pipe.js";
import { ListQuery, type Page, positionAfter, toPage } from "./pagination.js";
import { ownTenant, TenantsRepository } from "./tenants.js";

export class CreateChannelBody {
  @IsIn(CHANNEL_TYPES)
  type!: ChannelType;

  @ApiPropertyOptional({ description: "webhook and slack: where to POST" })
  @Optional()
  @IsString()
  @MaxLength(2048)
  @IsUrl({ protocols: ["http", "https"], require_protocol: true, require_tld: false })
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

const invalid = (field: string, problem: string) =>
  new AppError(400, "validation_failed", `Invalid input: ${field}.`, { [field]: [problem] });

@Injectable()
export class NotificationChannelsAdminService {
  private readonly logger = new Logger("notification-channels");

  constructor(
    private readonly channels: NotificationChannels,
    private readonly guard: DestinationGuard,
    private readonly tenants: TenantsRepository,
    private readonly transactions: Transactions,
    private readonly audit: AuditRepository,
    private readonly sender: NotificationSender,
    @Inject(CONFIG.alerts) private readonly config: AlertsConfig,
    @Inject(CONFIG.http) private readonly http: HttpConfig,
  ) {}

  async create(principal: Principal, body: CreateChannelBody) {
    if (body.type === "email") {
      if (body.address === undefined) throw invalid("address", "required for an email channel");
      if (body.url !== undefined) throw invalid("url", "an email channel has an address, not a url");
      if (!this.config.smtpUrl || !this.config.alertEmailFrom) {
        throw invalid("type", "email channels need SMTP_URL and ALERT_EMAIL_FROM on the server");
      }
    } else {
      if (body.url === undefined) throw invalid("url", `required for a ${body.type} channel`);
      if (body.address !== undefined)
        throw invalid("address", `a ${body.type} channel has a url, not an address`);
    }
    const tenantId = await this.tenantOfNew(principal, body.tenantId);
    await this.guard.checkSetting("url", body.url); // before any write: resolving may take 2 s
    const created = await this.channels.create(tenantId, {
      type: body.type,
      url: body.url,
      address: body.address,
      types: body.types,
    });
    await this.transactions.run((tx) =>
      this.audit.record(tx, principal, {
        action: "notification-channel.create",
        tenantId,
        targetType: "notification-channel",
        targetId: created.channel.id,
        details: { type: body.type, platform: tenantId === null },
      }),
    );
    return created;
  }

  /** A tenant-admin's channel is its tenant's; an operator's names a tenant, or none (platform). */
  private async tenantOfNew(principal: Principal, tenantId: string | undefined): Promise<string | null> {
    if (principal.role === "tenant-admin") return ownTenant(principal, tenantId);
    if (tenantId === undefined) return null;
    if (!(await this.tenants.find(PLATFORM, tenantId))) throw notFound("tenant");
    return tenantId;
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const channel = await this.channels.find(scopeOf(principal), id);
    if (!channel || !(await this.channels.delete(scopeOf(principal), id)))
      throw notFound("notification channel");
    await this.transactions.run((tx) =>
      this.audit.record(tx, principal, {
        action: "notification-channel.delete",
        tenantId: channel.tenantId,
        targetType: "notification-channel",
        targetId: id,
        details: { type: channel.type },
      }),
    );
  }

  /** Sends one test notification in the background (its outcome is logged); answers at once. */
  async test(principal: Principal, id: string): Promise<{ accepted: true }> {
    const channel = await this.channels.targetOf(scopeOf(principal), id);
    if (!channel) throw notFound("notification channel");
    const message = {
      transition: "test" as const,
      alert: testAlert(channel.tenantId),
      connectionName: null,
      link: `${this.http.publicBaseUrl}/admin/alerts`,
    };
    const log = { channelId: channel.id, tenantId: channel.tenantId, type: channel.type };
    void this.sender.send(channel, message, `notification-test:${channel.id}.${Date.now()}`).then(
      () => this.logger.log({ msg: "test notification sent", ...log }),
      (error: unknown) =>
        this.logger.warn({ msg: "test notification failed", ...log, errorCode: classify(error).code }),
    );
    return { accepted: true };
  }
}

@ApiTags("alerts")
@AdminApi()
@Controller("admin/notification-channels")
export class NotificationChannelsController {
  constructor(
    private readonly channels: NotificationChannels,
    private readonly service: NotificationChannelsAdminService,
  ) {}

  @Post()
  @HttpCode(201)
  @ApiCreatedResponse({
    description: "`{ channel, secrets? }`: a webhook channel's `whsec_` signing secret, shown this once",
  })
  create(@CurrentPrincipal() principal: Principal, @Body() body: CreateChannelBody) {
    return this.service.create(principal, body);
  }

  @Get()
  async list(
    @CurrentPrincipal() principal: Principal,
    @Query() query: ListQuery,
  ): Promise<Page<ChannelView>> {
    const rows = await this.channels.list(scopeOf(principal), {
      take: query.limit + 1,
      after: positionAfter(query),
    });
    return toPage(rows, query, (row) => row.createdAt);
  }

  @Delete(":id")
  @HttpCode(204)
  @ApiNoContentResponse({ description: "deleted; its pending notifications send nothing" })
  delete(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    return this.service.delete(principal, id);
  }

  @Post(":id/test")
  @HttpCode(202)
  @ApiAcceptedResponse({ description: "sends one test notification" })
  test(@CurrentPrincipal() principal: Principal, @Param("id", IdPipe) id: string) {
    return this.service.test(principal, id);
  }
}
