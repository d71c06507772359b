// Sends one notification to one channel: a signed webhook (Standard Webhooks with the channel's own
// `whsec_` secret, `webhook-id` = the job key, as CRM deliveries), a Slack incoming webhook
// (readable text with a link to the alert, slack-message.ts), or an email through SMTP_URL
// (nodemailer). Webhook and Slack URLs are checked again before each call and the call goes to the
// checked address (pinned). Failures are classified like any side effect: a refused destination or
// a 4xx is permanent, a network error, timeout, 5xx or an SMTP 4xx is retried.
//
// A channel's destination (`destination`) is what fairness counts calls by (the notification
// processor makes each call under its cap and circuit, src/jobs/destination-fairness.ts): the origin
// of its webhook or Slack URL, or, for email, the SMTP server (every email channel shares it).
import { CONFIG, type AlertsConfig, type JobsConfig } from "../../config/sections.js";
import { Inject, Injectable } from "@nestjs/common";
import type { Transporter } from "nodemailer";
import type { ChannelTarget } from "../notification-channels.repository.js";
import { callCheckedDestination } from "../../common/outbound/destination.js";
import { type CheckedDestination, DestinationGuard } from "../../common/outbound/destination-guard.js";
import { PermanentError, RetryableError } from "../../common/outbound/errors.js";
import { webhookSignature } from "../../common/outbound/webhook-signature.js";
import { bodyLines, headline, type NotificationMessage } from "./notification-message.js";
import { slackText } from "./slack-message.js";
import { smtpTransport } from "../../common/outbound/smtp.js";

/** A send prepared for one channel: its destination checked, the call not made yet. */
export type PreparedSend = () => Promise<void>;

@Injectable()
export class NotificationSender {
  private mailer: Promise<Transporter> | undefined;

  constructor(
    private readonly guard: DestinationGuard,
    @Inject(CONFIG.alerts) private readonly config: AlertsConfig,
    @Inject(CONFIG.jobs) private readonly jobs: JobsConfig,
  ) {}

  /** Sends `message` to `channel`; `id` identifies it (the job key: the webhook's `webhook-id`). */
  async send(channel: ChannelTarget, message: NotificationMessage, id: string): Promise<void> {
    const send = await this.prepare(channel, message, id);
    await send();
  }

  /**
   * The URL whose origin is the channel's destination: its webhook or Slack URL, or the SMTP server
   * (`smtp://host:port`, never its credentials). A channel that cannot be sent to is permanent.
   */
  destination(channel: ChannelTarget): string {
    if (channel.type !== "email") {
      if (!channel.sendUrl) throw new PermanentError("channel_incomplete");
      return channel.sendUrl;
    }
    if (!this.config.smtpUrl || !this.config.alertEmailFrom) throw new PermanentError("smtp_not_configured");
    const server = new URL(this.config.smtpUrl);
    return `${server.protocol}//${server.host}`;
  }

  /**
   * Checks the channel's destination now (a webhook or Slack URL: DestinationGuard, DNS included)
   * and answers the send itself, so the caller can make just the call under the destination's
   * fairness: a host that does not resolve is not the destination failing.
   */
  async prepare(channel: ChannelTarget, message: NotificationMessage, id: string): Promise<PreparedSend> {
    switch (channel.type) {
      case "webhook":
        return this.webhook(channel, message, id);
      case "slack": {
        const target = await this.guard.checkForCall(this.destination(channel));
        const body = JSON.stringify({ text: slackText(message) });
        return () => this.post(target, body, {});
      }
      case "email":
        return this.email(channel, message);
    }
  }

  private async webhook(
    channel: ChannelTarget,
    message: NotificationMessage,
    id: string,
  ): Promise<PreparedSend> {
    if (!channel.signingSecret) throw new PermanentError("channel_incomplete");
    const target = await this.guard.checkForCall(this.destination(channel));
    const secret = channel.signingSecret;
    // Signed when sent: the timestamp is the call's, also after a wait for the destination's slot.
    return () => {
      const sentAt = new Date();
      const body = JSON.stringify({
        type: `alert.${message.transition}`,
        timestamp: sentAt.toISOString(),
        data: { alert: message.alert, connectionName: message.connectionName, link: message.link },
      });
      return this.post(target, body, {
        "webhook-id": id,
        "webhook-timestamp": String(Math.floor(sentAt.getTime() / 1000)),
        "webhook-signature": webhookSignature(secret, id, sentAt, body),
      });
    };
  }

  private email(channel: ChannelTarget, message: NotificationMessage): PreparedSend {
    this.destination(channel); // SMTP configured
    if (!channel.address) throw new PermanentError("channel_incomplete");
    const address = channel.address;
    return async () => {
      try {
        await (
          await this.transport()
        ).sendMail({
          from: this.config.alertEmailFrom,
          to: address,
          subject: headline(message),
          text: bodyLines(message).join("\n"),
        });
      } catch (error) {
        // An SMTP 5xx refuses the message for good; anything else (4xx, connection) may pass later.
        const { responseCode, code } = error as { responseCode?: number; code?: string };
        if (responseCode !== undefined && responseCode >= 500)
          throw new PermanentError(`smtp_${responseCode}`);
        if (responseCode !== undefined) throw new RetryableError(`smtp_${responseCode}`);
        throw new RetryableError(code === "ETIMEDOUT" ? "timeout" : "network");
      }
    };
  }

  /**
   * The SMTP transport, its waits bounded by the side-effect timeout (nodemailer's own defaults are
   * minutes: a hanging server would hold a worker slot that long).
   */
  private transport(): Promise<Transporter> {
    const timeoutMs = this.jobs.sideEffectTimeoutMs;
    this.mailer ??= smtpTransport({
      url: this.config.smtpUrl,
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
    });
    return this.mailer;
  }

  private async post(
    target: CheckedDestination,
    body: string,
    headers: Record<string, string>,
  ): Promise<void> {
    await callCheckedDestination(
      target,
      { method: "POST", headers: { "content-type": "application/json", ...headers }, body },
      this.jobs.sideEffectTimeoutMs,
    );
  }
}
