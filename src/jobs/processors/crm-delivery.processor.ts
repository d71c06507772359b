// crm-delivery: POST the normalized event (and the lead as stored) to the tenant's CRM, signed per
// Standard Webhooks. `webhook-id` is the job key: the same on every retry and replay, so the CRM dedupes.
import { Inject, Injectable } from "@nestjs/common";
import { Webhook } from "standardwebhooks";
import type { AppConfig } from "../../config/config.js";
import { APP_CONFIG } from "../../config/config.module.js";
import { LeadsRepository } from "../../leads/leads.repository.js";
import { callDestination } from "../destination.js";
import { PermanentError } from "../errors.js";
import type { JobContext } from "../job-context.js";
import type { Processor } from "../processor.js";

@Injectable()
export class CrmDeliveryProcessor implements Processor {
  readonly operation = "crm-delivery" as const;

  constructor(
    private readonly leads: LeadsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async run({ job, receipt, connection }: JobContext): Promise<void> {
    const url = connection.settings.crmDestination?.url;
    if (!url) return; // the destination was removed after the event arrived: nothing to deliver
    if (!connection.crmSigningSecret) throw new PermanentError("no_signing_secret");
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
    await callDestination(
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
    );
  }
}
