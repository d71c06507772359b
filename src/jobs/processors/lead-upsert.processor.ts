// lead-upsert: the event's effect on the tenant's lead record, keyed by (tenant, provider, lead id).
// The provider's rules (src/providers/<provider>/*.follow-up.ts) say what the event changes, fetching
// from the provider API where the webhook is only a trigger; this writes it. Re-running leaves the same rows.
// The receipt's CRM delivery runs after it, with the lead as written here (OPERATION_SETTINGS.after).
import { Injectable } from "@nestjs/common";
import { type LeadKey, LeadsRepository } from "../../leads/leads.repository.js";
import { FollowUpRegistry } from "../../providers/follow-up-registry.js";
import type { JobContext } from "../job-context.js";
import type { Processor } from "../processor.js";

@Injectable()
export class LeadUpsertProcessor implements Processor {
  readonly operation = "lead-upsert" as const;

  constructor(
    private readonly leads: LeadsRepository,
    private readonly followUps: FollowUpRegistry,
  ) {}

  needsCredentials({ receipt }: JobContext): boolean {
    return this.followUps.get(receipt.provider).needsCredentials.leadUpdate;
  }

  async run({ receipt, connection }: JobContext): Promise<void> {
    const key: LeadKey = {
      tenantId: connection.tenantId,
      connectionId: connection.id,
      provider: receipt.provider,
      externalLeadId: receipt.leadId,
    };
    const update = await this.followUps
      .get(receipt.provider)
      .leadUpdate(receipt, connection.accessToken, () => this.leads.storedHistory(key));
    // Without contact data (a message before its lead) the lead is only made sure to exist.
    const leadId = update.profile
      ? await this.leads.upsertContact(key, receipt.id, update.profile, update.lastEventAt, update.messages)
      : await this.leads.touch(key, update.lastEventAt, update.messages);
    if (update.history) await this.leads.addHistory(key.tenantId, leadId, update.history);
    if (update.phoneConsent) {
      await this.leads.recordPhoneConsent(key.tenantId, leadId, update.phoneConsent, receipt.receivedAt);
    }
  }
}
