// Confirming an email channel's address (api.md "Alerts and notification channels"): Leadgate
// mails `${PUBLIC_BASE_URL}/notification-channels/confirm?token=…` to the address, and the channel
// receives alerts only once that link's page was confirmed. So nobody can make Leadgate mail an
// address that did not agree to it (beyond the confirmation itself, at most 3 an hour).
//
// The token is the one credential of the confirm routes (they take no API key). A token that opens
// no pending channel (unknown, used, replaced or expired) is a failed authentication, counted
// against the client IP's PREAUTH_FAILURE_LIMIT like a wrong webhook secret; a valid token is
// never refused (only failures are counted, and a well-formed token is always looked up).
import { CONFIG, type AlertsConfig, type HttpConfig, type JobsConfig } from "../config/sections.js";
import { Inject, Injectable, Logger } from "@nestjs/common";
import type { Transporter } from "nodemailer";
import { PreauthBudget } from "../auth/preauth-budget.js";
import { AppError } from "../common/app-error.js";
import { TimedOut, withTimeout } from "../common/with-timeout.js";
import {
  CONFIRMATION_DAYS,
  type ConfirmationToken,
  newConfirmationToken,
  readConfirmationToken,
  sameHash,
} from "./channel-confirmation-token.js";
import { type ChannelRow, NotificationChannels } from "./notification-channels.repository.js";
import { smtpTransport } from "../common/outbound/smtp.js";

export const CONFIRM_PATH = "/notification-channels/confirm";

const invalidToken = () =>
  new AppError(
    400,
    "invalid_token",
    `This confirmation link is unknown, already used, replaced by a newer one or expired (${CONFIRMATION_DAYS} days): ask for a new one.`,
  );

@Injectable()
export class ChannelConfirmations {
  private readonly logger = new Logger("notification-channels");
  private mailer: Promise<Transporter> | undefined;

  constructor(
    private readonly channels: NotificationChannels,
    private readonly budget: PreauthBudget,
    @Inject(CONFIG.alerts) private readonly config: AlertsConfig,
    @Inject(CONFIG.http) private readonly http: HttpConfig,
    @Inject(CONFIG.jobs) private readonly jobs: JobsConfig,
  ) {}

  /** A new token for channel `channelId`: its hash goes in the row, the token in the mail. */
  issue(channelId: string): ConfirmationToken {
    return newConfirmationToken(channelId);
  }

  /**
   * Mails the confirmation link of `token` to `address`, waiting at most SIDE_EFFECT_TIMEOUT_MS;
   * answers whether the SMTP server took it (a failure is logged: a resend mails a new link).
   */
  async mail(channel: Pick<ChannelRow, "id" | "tenantId">, address: string, token: string): Promise<boolean> {
    const { smtpUrl, alertEmailFrom } = this.config;
    if (!smtpUrl || !alertEmailFrom) return false;
    this.mailer ??= smtpTransport(smtpUrl);
    const link = `${this.http.publicBaseUrl}${CONFIRM_PATH}?token=${encodeURIComponent(token)}`;
    try {
      await withTimeout(
        (await this.mailer).sendMail({
          from: alertEmailFrom,
          to: address,
          subject: "Confirm Leadgate alerts to this address",
          text: [
            "Someone asked Leadgate to send alerts to this address.",
            "To receive them, open this link and press the button on the page:",
            "",
            link,
            "",
            `The link works for ${CONFIRMATION_DAYS} days. If you did not expect this message, ignore it: nothing more will be sent.`,
          ].join("\n"),
        }),
        this.jobs.sideEffectTimeoutMs,
        "the SMTP server",
      );
      this.logger.log({ msg: "confirmation mailed", channelId: channel.id, tenantId: channel.tenantId });
      return true;
    } catch (error) {
      const code = (error as { responseCode?: number }).responseCode;
      this.logger.warn({
        msg: "confirmation mail failed",
        channelId: channel.id,
        tenantId: channel.tenantId,
        errorCode: error instanceof TimedOut ? "timeout" : code === undefined ? "network" : `smtp_${code}`,
      });
      return false;
    }
  }

  /** Whether `token` (from the link) opens a pending channel; `400 invalid_token` (or 429 beyond the budget) otherwise. */
  async check(token: unknown, ip: string): Promise<void> {
    await this.open(token, ip);
  }

  /** Confirms the channel `token` opens: it becomes active, the token is used up. */
  async confirm(token: unknown, ip: string): Promise<ChannelRow> {
    const opened = await this.open(token, ip);
    const confirmed = await this.channels.confirm(opened.channelId, opened.hash);
    if (!confirmed) throw await this.budget.failed(ip, invalidToken()); // used or replaced meanwhile
    this.logger.log({ msg: "channel confirmed", channelId: confirmed.id, tenantId: confirmed.tenantId });
    return confirmed;
  }

  private async open(token: unknown, ip: string): Promise<{ channelId: string; hash: string }> {
    const read = readConfirmationToken(token);
    if (!read) throw await this.budget.failed(ip, invalidToken());
    const stored = await this.channels.pendingConfirmation(read.channelId);
    if (stored === undefined || !sameHash(read.hash, stored))
      throw await this.budget.failed(ip, invalidToken());
    return read;
  }
}
