// notification: one message about one alert opening or resolving to one channel (the job key names
// all three: notification-key.ts). At least once: a local record under the job key is written
// before the send and marked after it, so a re-run after a completed send sends nothing, and only
// a crash between the send and that mark repeats it, once (Slack and SMTP cannot dedupe; a webhook
// receiver drops the repeat by its `webhook-id`, the job key). A channel deleted meanwhile gets nothing.
//
// Fair between tenants as CRM deliveries are (DestinationFairness): each call goes through its
// channel's destination's cap in this worker and its circuit (the origin of the webhook or Slack
// URL; the SMTP server for email), so a channel that hangs holds at most the cap's slots, and its
// jobs wait (no attempt used) while its circuit is open or its slots stay taken.
import { CONFIG, type HttpConfig } from "../../config/sections.js";
import { Inject, Injectable } from "@nestjs/common";
import { AlertBook } from "../alert-book.js";
import { NotificationChannels } from "../notification-channels.repository.js";
import { PermanentError } from "../../common/outbound/errors.js";
import { DestinationFairness, type WaitingJob } from "../../jobs/destination-fairness.js";
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
    private readonly fairness: DestinationFairness,
    @Inject(CONFIG.http) private readonly config: HttpConfig,
  ) {
    fairness.registerDestinations(this.operation, (jobs) => this.destinations(jobs));
  }

  /** Calls no provider. */
  needsCredentials(): boolean {
    return false;
  }

  async run({ job }: AlertJobContext): Promise<void> {
    const key = parseNotificationKey(job.jobKey);
    if (!key) throw new PermanentError("not_a_notification_key");
    const channel = await this.channels.target(job.tenantId, key.channelId);
    if (!channel) return; // deleted after the alert: nothing to send
    const destination = this.sender.destination(channel);
    await this.fairness.check(this.operation, destination); // open circuit or full cap: wait, before any work
    const alert = await this.alerts.find(job.tenantId, key.alertId);
    if (!alert) throw new PermanentError("alert_not_found");
    const { earlier } = await this.sideEffects.begin(job);
    if (earlier === "succeeded") return;
    const { connectionName, ...view } = alert;
    const send = await this.sender.prepare(
      channel,
      { transition: key.transition, alert: view, connectionName, link: alertLink(this.config, alert.id) },
      job.jobKey,
    );
    // The destination's cap and circuit decide whether the call goes out now.
    await this.fairness.call(this.operation, destination, send);
    await this.sideEffects.finish(job, "succeeded");
  }

  /** Where waiting notification jobs call (their channels' destinations), for a closing circuit. */
  private async destinations(jobs: readonly WaitingJob[]): Promise<Map<string, string>> {
    const byChannel = new Map<string, string | undefined>();
    const found = new Map<string, string>();
    for (const job of jobs) {
      const channelId = parseNotificationKey(job.jobKey)?.channelId;
      if (!channelId) continue;
      const at = `${job.tenantId}/${channelId}`;
      if (!byChannel.has(at)) byChannel.set(at, await this.destinationOf(job.tenantId, channelId));
      const destination = byChannel.get(at);
      if (destination) found.set(job.id, destination);
    }
    return found;
  }

  private async destinationOf(tenantId: string, channelId: string): Promise<string | undefined> {
    try {
      const channel = await this.channels.target(tenantId, channelId);
      return channel && this.sender.destination(channel);
    } catch {
      return undefined; // unreadable or incomplete: its job fails on its own when it runs
    }
  }
}

/** Where the alert is in the admin API. */
export function alertLink(config: Pick<HttpConfig, "publicBaseUrl">, alertId: string): string {
  return `${config.publicBaseUrl}/admin/alerts/${alertId}`;
}
