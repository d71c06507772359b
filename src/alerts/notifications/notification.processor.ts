// notification: one message about one alert opening or resolving to one channel (the job key names
// all three: notification-key.ts). At least once: a local record under the job key is written
// before the send and marked after it, so a re-run after a completed send sends nothing, and only
// a crash between the send and that mark repeats it, once (Slack and SMTP cannot dedupe; a webhook
// receiver drops the repeat by its `webhook-id`, the job key). A channel deleted meanwhile gets nothing.
import { CONFIG, type HttpConfig } from "../../config/sections.js";
import { Inject, Injectable } from "@nestjs/common";
import { AlertBook } from "../alert-book.js";
import { NotificationChannels } from "../notification-channels.repository.js";
import { PermanentError } from "../../common/outbound/errors.js";
import type { AlertJobContext } from "../../jobs/job-context.js";
import type { Processor } from "../../jobs/processor.js";
import { SideEffectsRepository } from "../../jobs/side-effects.repository.js";
import { parseNotificationKey } from "./notification-key.js";
import { NotificationSender } from "./notification-sender.js";

@Injectable()
export class NotificationProcessor implements Processor<AlertJobContext> {
  readonly operation = "notification" as const;

  constructor(
    private readonly alerts: AlertBook,
    private readonly channels: NotificationChannels,
    private readonly sender: NotificationSender,
    private readonly sideEffects: SideEffectsRepository,
    @Inject(CONFIG.http) private readonly config: HttpConfig,
  ) {}

  /** Calls no provider. */
  needsCredentials(): boolean {
    return false;
  }

  async run({ job }: AlertJobContext): Promise<void> {
    const key = parseNotificationKey(job.jobKey);
    if (!key) throw new PermanentError("not_a_notification_key");
    const channel = await this.channels.target(job.tenantId, key.channelId);
    if (!channel) return; // deleted after the alert: nothing to send
    const alert = await this.alerts.find(job.tenantId, key.alertId);
    if (!alert) throw new PermanentError("alert_not_found");
    const { earlier } = await this.sideEffects.begin(job);
    if (earlier === "succeeded") return;
    const { connectionName, ...view } = alert;
    await this.sender.send(
      channel,
      { transition: key.transition, alert: view, connectionName, link: alertLink(this.config, alert.id) },
      job.jobKey,
    );
    await this.sideEffects.finish(job, "succeeded");
  }
}

/** Where the alert is in the admin API. */
export function alertLink(config: Pick<HttpConfig, "publicBaseUrl">, alertId: string): string {
  return `${config.publicBaseUrl}/admin/alerts/${alertId}`;
}
