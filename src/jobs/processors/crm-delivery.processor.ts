// crm-delivery: POST the normalized event (and the lead as stored) to the tenant's CRM, signed per
// Standard Webhooks (with two signatures during a signing-secret rotation). `webhook-id` is the job
// key: the same on every retry and replay, so the CRM dedupes. A local record under the job key
// remembers a delivery the CRM accepted (written by the statement that records the job's success:
// recordsSuccess), so a new job under the same key (the event delivered again after retention purged
// its receipt) sends nothing; a run whose outcome is unknown sends again (the CRM cannot be asked),
// and a forced replay clears it. The URL is checked again before each
// call (DNS may have changed since it was set): a forbidden destination is `dead` with
// destination_forbidden and nothing is sent.
import { CONFIG, type JobsConfig } from "../../config/sections.js";
import { Inject, Injectable } from "@nestjs/common";
import { LeadsRepository } from "../../leads/leads.repository.js";
import { callCheckedDestination } from "../../common/outbound/destination.js";
import { webhookSignature } from "../../common/outbound/webhook-signature.js";
import { DestinationGuard } from "../../common/outbound/destination-guard.js";
import { PermanentError, RetryableError } from "../../common/outbound/errors.js";
import { DestinationFairness } from "../destination-fairness.js";
import type { EventKind } from "../../providers/provider-event.js";
import type { JobContext } from "../job-context.js";
import type { Processor } from "../processor.js";

@Injectable()
export class CrmDeliveryProcessor implements Processor {
  readonly operation = "crm-delivery" as const;

  constructor(
    private readonly leads: LeadsRepository,
    private readonly guard: DestinationGuard,
    private readonly fairness: DestinationFairness,
    @Inject(CONFIG.jobs) private readonly config: JobsConfig,
  ) {}

  /** The agency's CRM, never a provider: it runs whatever the state of the provider credentials. */
  needsCredentials(): boolean {
    return false;
  }

  /** A delivery the CRM accepted is remembered; a run that found no destination sent nothing. */
  recordsSuccess({ connection }: JobContext): boolean {
    return connection.settings.crmDestination?.url !== undefined;
  }

  async run({ job, receipt, connection }: JobContext): Promise<void> {
    const url = connection.settings.crmDestination?.url;
    if (!url) return; // the destination was removed after the event arrived: nothing to deliver
    if (!connection.crmSigningSecret) throw new PermanentError("no_signing_secret");
    await this.fairness.check(this.operation, url); // open circuit or full cap: wait, before any work
    const target = await this.guard.checkForCall(url);
    // The claim read the record of an earlier delivery under this key.
    if (job.sideEffect === "succeeded") return;
    // Runs after this receipt's lead-upsert (OPERATION_SETTINGS.after), so the lead exists.
    const stored = await this.leads.find(connection.tenantId, receipt.provider, receipt.leadId);
    if (!stored) throw new RetryableError("lead_not_found");
    const sentAt = new Date();
    const body = JSON.stringify({
      type: deliveryType(receipt.kind, stored.createdByReceiptId === receipt.id),
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
        lead: stored.lead,
      },
    });
    // During a rotate-crm-secret grace period the CRM may still check the old secret: sign with both.
    const signature = [connection.crmSigningSecret, connection.previousCrmSigningSecret]
      .filter((secret) => secret !== undefined)
      .map((secret) => webhookSignature(secret, job.jobKey, sentAt, body))
      .join(" ");
    // The destination's concurrency cap and circuit decide whether the call goes out now.
    await this.fairness.call(this.operation, url, () =>
      callCheckedDestination(
        target,
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
      ),
    );
  }
}

/**
 * The delivery's `type` (api.md, "CRM deliveries"): `lead.created` for the receipt whose lead-upsert
 * first made the lead complete (recorded by that upsert, once: a retry or replay sends the same);
 * any other event keeps its kind, an event that says "created" about a lead that existed before
 * being an update.
 */
export function deliveryType(kind: EventKind, createdTheLead: boolean): EventKind {
  if (createdTheLead) return "lead.created";
  return kind === "lead.created" ? "lead.updated" : kind;
}
