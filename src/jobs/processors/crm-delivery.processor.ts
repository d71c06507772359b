// crm-delivery: POST the normalized event (and the lead as stored) to the tenant's CRM, signed per
// Standard Webhooks. `webhook-id` is the job key: the same on every retry and replay, so the CRM
// dedupes. A local record under the job key remembers a delivery the CRM accepted, so a new job
// under the same key (the event delivered again after retention purged its receipt) sends nothing;
// a run whose outcome is unknown sends again (the CRM cannot be asked), and a forced replay clears it.
import { Inject, Injectable } from "@nestjs/common";
import { Webhook } from "standardwebhooks";
import type { AppConfig } from "../../config/config.js";
import { APP_CONFIG } from "../../config/config.module.js";
import { LeadsRepository } from "../../leads/leads.repository.js";
import { callDestination } from "../../common/outbound/destination.js";
import { PermanentError } from "../../common/outbound/errors.js";
import { DestinationGuard } from "../destination-guard.js";
import { SideEffectsRepository } from "../side-effects.repository.js";
import type { JobContext } from "../job-context.js";
import type { Processor } from "../processor.js";

@Injectable()
export class CrmDeliveryProcessor implements Processor {
  readonly operation = "crm-delivery" as const;

  constructor(
    private readonly leads: LeadsRepository,
    private readonly sideEffects: SideEffectsRepository,
    private readonly destinations: DestinationGuard,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The agency's CRM, never a provider: it runs whatever the state of the provider credentials. */
  needsCredentials(): boolean {
    return false;
  }

  async run({ job, receipt, connection }: JobContext): Promise<void> {
    const url = connection.settings.crmDestination?.url;
    if (!url) return; // the destination was removed after the event arrived: nothing to deliver
    if (!connection.crmSigningSecret) throw new PermanentError("no_signing_secret");
    await this.destinations.check(this.operation, url); // open circuit or full cap: wait, before any work
    const { earlier } = await this.sideEffects.begin(job);
    if (earlier === "succeeded") return;
    const lead = await this.leads.find(connection.tenantId, receipt.provider, receipt.leadId);
    const sentAt = new Date();
    const body = JSON.stringify({
      type: receipt.kind,
      timestamp: sentAt.toISOString(),
      data: {
        receiptId: receipt.id,
        connectionId: connection.id,
        provider: receipt.provider,
        accountId: receipt.accountId,
        eventId: receipt.eventId,
        leadId: receipt.leadId,
        kind: receipt.kind,
        occurredAt: receipt.occurredAt.toISOString(),
        payload: receipt.payload,
        lead,
      },
    });
    const signature = new Webhook(connection.crmSigningSecret).sign(job.jobKey, sentAt, body);
    // The destination's concurrency cap and circuit decide whether the call goes out now.
    await this.destinations.call(this.operation, url, () =>
      callDestination(
        url,
        {
          method: "POST",
          headers: {
            "content-type": "application/json",
            "webhook-id": job.jobKey,
            "webhook-timestamp": String(Math.floor(sentAt.getTime() / 1000)),
            "webhook-signature": signature,
          },
          body,
        },
        this.config.sideEffectTimeoutMs,
        "crm",
      ),
    );
    await this.sideEffects.finish(job, "succeeded");
  }
}
