// Notification channels' admin actions (api.md "Alerts and notification channels"): create and
// delete (each with its audit row, in one transaction), a test notification answered with its
// outcome, and the confirmation of an email channel's address.
import { randomUUID } from "node:crypto";
import { CONFIG, type AlertsConfig, type HttpConfig, type JobsConfig } from "../config/sections.js";
import { Inject, Injectable, Logger } from "@nestjs/common";
import { ApiProperty, ApiPropertyOptional } from "@nestjs/swagger";
import { ALERT_TYPES, type AlertType, CHANNEL_TYPES, type ChannelType } from "./alert-types.js";
import { ChannelConfirmations } from "./channel-confirmations.js";
import { testAlert } from "./notifications/notification-message.js";
import { NotificationSender } from "./notifications/notification-sender.js";
import {
  type ChannelRow,
  type ChannelStatus,
  NotificationChannels,
} from "./notification-channels.repository.js";
import { NullableId, NullableString } from "../common/api-properties.js";
import { PLATFORM, type Principal, scopeOf } from "../auth/principal.js";
import { AppError } from "../common/app-error.js";
import { maskQuery } from "../common/masked-url.js";
import { DestinationGuard } from "../common/outbound/destination-guard.js";
import { classify } from "../common/outbound/errors.js";
import { TimedOut, withTimeout } from "../common/with-timeout.js";
import { Transactions } from "../database/transactions.js";
import { AuditRepository } from "../audit/audit.repository.js";
import { notFound } from "../common/id.pipe.js";
import { ChannelActionLimits } from "./notification-channel-limits.js";
import { ownTenant, TenantsRepository } from "../tenants/tenants.repository.js";

/** A channel as the admin API shows it: no secret, and a URL's query string (it may hold a token) masked. */
export class ChannelView implements ChannelRow {
  @ApiProperty({ format: "uuid" })
  id!: string;

  @NullableId("null: a platform channel (every tenant's alerts)")
  tenantId!: string | null;

  @ApiProperty({ enum: CHANNEL_TYPES })
  type!: ChannelType;

  @ApiProperty({ enum: ["active", "pending_confirmation"] })
  status!: ChannelStatus;

  @NullableString("webhook: the URL, its query string masked; slack and email: null")
  url!: string | null;

  @NullableString("email: the address")
  address!: string | null;

  @ApiProperty({ enum: ALERT_TYPES, isArray: true, nullable: true, description: "null: every type" })
  types!: AlertType[] | null;

  @ApiProperty()
  createdAt!: Date;
}

export class ChannelSecrets {
  @ApiProperty({ description: "a webhook channel's `whsec_` signing secret" })
  signingSecret!: string;
}

export class ChannelAnswer {
  @ApiProperty({ type: () => ChannelView })
  channel!: ChannelView;
}

export class CreatedChannel extends ChannelAnswer {
  @ApiPropertyOptional({ type: () => ChannelSecrets, description: "webhook channels: shown this once" })
  secrets?: ChannelSecrets;
}

export function channelView(row: ChannelRow): ChannelView {
  return { ...row, url: maskQuery(row.url) };
}

/** What a test notification did: `status` is the receiver's HTTP status or SMTP reply code when it refused. */
export class TestOutcome {
  @ApiProperty()
  delivered!: boolean;

  @ApiPropertyOptional({ description: "the receiver's HTTP status or SMTP reply code when it refused" })
  status?: number;

  @ApiPropertyOptional({ description: "an error code when it was not delivered (e.g. `timeout`)" })
  error?: string;
}

export interface NewChannelInput {
  type: ChannelType;
  url?: string;
  address?: string;
  types?: AlertType[];
  tenantId?: string;
}

const invalid = (field: string, problem: string) =>
  new AppError(400, "validation_failed", `Invalid input: ${field}.`, { [field]: [problem] });

@Injectable()
export class NotificationChannelsAdminService {
  private readonly logger = new Logger("notification-channels");

  constructor(
    private readonly channels: NotificationChannels,
    private readonly confirmations: ChannelConfirmations,
    private readonly limits: ChannelActionLimits,
    private readonly guard: DestinationGuard,
    private readonly tenants: TenantsRepository,
    private readonly transactions: Transactions,
    private readonly audit: AuditRepository,
    private readonly sender: NotificationSender,
    @Inject(CONFIG.alerts) private readonly config: AlertsConfig,
    @Inject(CONFIG.http) private readonly http: HttpConfig,
    @Inject(CONFIG.jobs) private readonly jobs: JobsConfig,
  ) {}

  /** Creates the channel and its audit row together; an email channel is then mailed its confirmation link. */
  async create(principal: Principal, body: NewChannelInput): Promise<CreatedChannel> {
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
    const id = randomUUID();
    const confirmation = body.type === "email" ? this.confirmations.issue(id) : undefined;
    const created = await this.transactions.run(async (tx) => {
      const made = await this.channels.create(tx, tenantId, {
        id,
        type: body.type,
        url: body.url,
        address: body.address,
        types: body.types,
        confirmationHash: confirmation?.hash,
      });
      await this.audit.record(tx, principal, {
        action: "notification-channel.create",
        tenantId,
        targetType: "notification-channel",
        targetId: made.channel.id,
        details: { type: body.type, platform: tenantId === null },
      });
      return made;
    });
    if (confirmation) await this.confirmations.mail(created.channel, body.address!, confirmation.token);
    return { ...created, channel: channelView(created.channel) };
  }

  /** A tenant-admin's channel is its tenant's; an operator's names a tenant, or none (platform). */
  private async tenantOfNew(principal: Principal, tenantId: string | undefined): Promise<string | null> {
    if (principal.role !== "operator") return ownTenant(principal, tenantId);
    if (tenantId === undefined) return null;
    if (!(await this.tenants.find(PLATFORM, tenantId))) throw notFound("tenant");
    return tenantId;
  }

  /** Deletes the channel and writes its audit row together, or neither. */
  async delete(principal: Principal, id: string): Promise<void> {
    await this.transactions.run(async (tx) => {
      const deleted = await this.channels.delete(tx, scopeOf(principal), id);
      if (!deleted) throw notFound("notification channel");
      await this.audit.record(tx, principal, {
        action: "notification-channel.delete",
        tenantId: deleted.tenantId,
        targetType: "notification-channel",
        targetId: id,
        details: { type: deleted.type },
      });
    });
  }

  /**
   * Sends one test notification and answers its outcome, waiting at most SIDE_EFFECT_TIMEOUT_MS.
   * A pending email channel is sent nothing (`409 channel_pending`: its address has not agreed),
   * and each channel gets at most TESTS_PER_MINUTE.
   */
  async test(principal: Principal, id: string): Promise<TestOutcome> {
    const channel = await this.channels.targetOf(scopeOf(principal), id);
    if (!channel) throw notFound("notification channel");
    if (channel.status === "pending_confirmation") {
      throw new AppError(
        409,
        "channel_pending",
        "This email channel's address has not confirmed yet: it is sent nothing until then (resend-confirmation mails a new link).",
      );
    }
    await this.limits.test(channel.id);
    const message = {
      transition: "test" as const,
      alert: testAlert(channel.tenantId),
      connectionName: null,
      link: `${this.http.publicBaseUrl}/admin/alerts`,
    };
    const outcome = await this.outcome(
      this.sender.send(channel, message, `notification-test:${channel.id}.${Date.now()}`),
    );
    this.logger.log({
      msg: "test notification",
      channelId: channel.id,
      tenantId: channel.tenantId,
      type: channel.type,
      delivered: outcome.delivered,
      ...(outcome.error ? { errorCode: outcome.error } : {}),
    });
    return outcome;
  }

  private async outcome(sending: Promise<void>): Promise<TestOutcome> {
    try {
      await withTimeout(sending, this.jobs.sideEffectTimeoutMs, "the channel");
      return { delivered: true };
    } catch (error) {
      const code = error instanceof TimedOut ? "timeout" : classify(error).code;
      const status = /^(?:http|smtp)_(\d{3})$/.exec(code)?.[1];
      return { delivered: false, ...(status ? { status: Number(status) } : {}), error: code };
    }
  }

  /**
   * Mails a pending email channel a new confirmation link; the old one stops working. At most
   * RESENDS_PER_HOUR per channel; `409 channel_not_pending` for a channel with nothing to confirm.
   */
  async resendConfirmation(principal: Principal, id: string): Promise<ChannelAnswer> {
    const scope = scopeOf(principal);
    const channel = await this.channels.find(scope, id);
    if (!channel) throw notFound("notification channel");
    if (channel.status !== "pending_confirmation") throw notPending();
    await this.limits.resend(channel.id);
    const confirmation = this.confirmations.issue(channel.id);
    const renewed = await this.channels.renewConfirmation(scope, id, confirmation.hash);
    if (!renewed?.address) throw notPending(); // confirmed or deleted meanwhile
    await this.confirmations.mail(renewed, renewed.address, confirmation.token);
    return { channel: channelView(renewed) };
  }
}

const notPending = () =>
  new AppError(
    409,
    "channel_not_pending",
    "This channel has no confirmation pending: only a new email channel has one.",
  );
