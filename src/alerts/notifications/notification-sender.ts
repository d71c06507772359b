// Sends one notification to one channel: a signed webhook (Standard Webhooks with the channel's own
// `whsec_` secret, `webhook-id` = the job key, as CRM deliveries), a Slack incoming webhook
// (readable text with a link to the alert), or an email through SMTP_URL (nodemailer). Webhook and
// Slack URLs are checked again before each call and the call goes to the checked address (pinned).
// Failures are classified like any side effect: a refused destination or a 4xx is permanent, a
// network error, timeout, 5xx or an SMTP 4xx is retried.
import { CONFIG, type AlertsConfig, type JobsConfig } from "../../config/sections.js";
import { Inject, Injectable } from "@nestjs/common";
import nodemailer, { type Transporter } from "nodemailer";
import type { ChannelTarget } from "../notification-channels.repository.js";
import { callCheckedDestination } from "../../common/outbound/destination.js";
import { type CheckedDestination, DestinationGuard } from "../../common/outbound/destination-guard.js";
import { DestinationForbidden } from "../../common/outbound/destination-policy.js";
import { PermanentError, RetryableError } from "../../common/outbound/errors.js";
import { webhookSignature } from "../../common/outbound/webhook-signature.js";
import { bodyLines, headline, type NotificationMessage } from "./notification-message.js";

@Injectable()
export class NotificationSender {
  private mailer: Transporter | undefined;

  constructor(
    private readonly guard: DestinationGuard,
    @Inject(CONFIG.alerts) private readonly config: AlertsConfig,
    @Inject(CONFIG.jobs) private readonly jobs: JobsConfig,
  ) {}

  /** Sends `message` to `channel`; `id` identifies it (the job key: the webhook's `webhook-id`). */
  async send(channel: ChannelTarget, message: NotificationMessage, id: string): Promise<void> {
    switch (channel.type) {
      case "webhook":
        return this.webhook(channel, message, id);
      case "slack":
        return this.slack(channel, message);
      case "email":
        return this.email(channel, message);
    }
  }

  private async webhook(channel: ChannelTarget, message: NotificationMessage, id: string): Promise<void> {
    if (!channel.sendUrl || !channel.signingSecret) throw new PermanentError("channel_incomplete");
    const sentAt = new Date();
    const body = JSON.stringify({
      type: `alert.${message.transition}`,
      timestamp: sentAt.toISOString(),
      data: { alert: message.alert, connectionName: message.connectionName, link: message.link },
    });
    await this.post(channel.sendUrl, body, {
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(sentAt.getTime() / 1000)),
      "webhook-signature": webhookSignature(channel.signingSecret, id, sentAt, body),
    });
  }

  private async slack(channel: ChannelTarget, message: NotificationMessage): Promise<void> {
    if (!channel.sendUrl) throw new PermanentError("channel_incomplete");
    const [summary, ...rest] = bodyLines(message);
    const text = [
      `*${headline(message)}*`,
      summary,
      ...rest.slice(0, -1),
      `<${message.link}|Open the alert>`,
    ].join("\n");
    await this.post(channel.sendUrl, JSON.stringify({ text }), {});
  }

  private async email(channel: ChannelTarget, message: NotificationMessage): Promise<void> {
    const { smtpUrl, alertEmailFrom } = this.config;
    if (!smtpUrl || !alertEmailFrom) throw new PermanentError("smtp_not_configured");
    if (!channel.address) throw new PermanentError("channel_incomplete");
    this.mailer ??= nodemailer.createTransport(smtpUrl);
    try {
      await this.mailer.sendMail({
        from: alertEmailFrom,
        to: channel.address,
        subject: headline(message),
        text: bodyLines(message).join("\n"),
      });
    } catch (error) {
      // An SMTP 5xx refuses the message for good; anything else (4xx, connection) may pass later.
      const code = (error as { responseCode?: number }).responseCode;
      if (code !== undefined && code >= 500) throw new PermanentError(`smtp_${code}`);
      throw new RetryableError(code === undefined ? "network" : `smtp_${code}`);
    }
  }

  private async post(url: string, body: string, headers: Record<string, string>): Promise<void> {
    await callCheckedDestination(
      await this.check(url),
      { method: "POST", headers: { "content-type": "application/json", ...headers }, body },
      this.jobs.sideEffectTimeoutMs,
    );
  }

  /** The destination as checked now: forbidden is permanent; a host that does not resolve may come back. */
  private async check(url: string): Promise<CheckedDestination> {
    try {
      return await this.guard.check(url);
    } catch (error) {
      if (error instanceof DestinationForbidden) throw new PermanentError("destination_forbidden");
      throw new RetryableError("network");
    }
  }
}
