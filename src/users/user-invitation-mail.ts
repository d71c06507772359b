import { CONFIG, type AlertsConfig, type JobsConfig } from "../config/sections.js";
import { Inject, Injectable, Logger } from "@nestjs/common";
import type { Transporter } from "nodemailer";
import { TimedOut, withTimeout } from "../common/with-timeout.js";
import { INVITATION_HOURS, type Invitation } from "./invitations.repository.js";
import { smtpTransport } from "../common/outbound/smtp.js";

/**
 * Mails an invitation when SMTP_URL (and ALERT_EMAIL_FROM) are set, through the SMTP server the
 * email notification channels use. The URL is also in the API's answer, so a failed mail is only
 * logged (never the URL: it is a credential).
 */
@Injectable()
export class UserInvitationMail {
  private readonly logger = new Logger("users");
  private mailer: Promise<Transporter> | undefined;

  constructor(
    @Inject(CONFIG.alerts) private readonly config: AlertsConfig,
    @Inject(CONFIG.jobs) private readonly jobs: JobsConfig,
  ) {}

  /** Answers whether the SMTP server took the mail (false without SMTP_URL). */
  async send(userId: string, address: string, invitation: Invitation): Promise<boolean> {
    const { smtpUrl, alertEmailFrom } = this.config;
    if (!smtpUrl || !alertEmailFrom) return false;
    this.mailer ??= smtpTransport(smtpUrl);
    try {
      await withTimeout(
        (await this.mailer).sendMail({
          from: alertEmailFrom,
          to: address,
          subject: "Your Leadgate console invitation",
          text: [
            "You are invited to the Leadgate console. Open this link to choose your password:",
            "",
            invitation.url,
            "",
            `The link works once, for ${INVITATION_HOURS} hours. If you did not expect this message, ignore it.`,
          ].join("\n"),
        }),
        this.jobs.sideEffectTimeoutMs,
        "the SMTP server",
      );
      this.logger.log({ msg: "invitation mailed", userId });
      return true;
    } catch (error) {
      const code = (error as { responseCode?: number }).responseCode;
      this.logger.warn({
        msg: "invitation mail failed",
        userId,
        errorCode: error instanceof TimedOut ? "timeout" : code === undefined ? "network" : `smtp_${code}`,
      });
      return false;
    }
  }
}
