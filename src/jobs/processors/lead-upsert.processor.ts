// lead-upsert: the event's effect on the tenant's lead record, keyed by (tenant, provider, lead id).
// The provider's rules (src/providers/<provider>/*.inbox.ts) say what the event changes, fetching
// from the provider API where the webhook is only a trigger; this writes it. Re-running leaves the same rows.
// The receipt's CRM delivery runs after it, with the lead as written here (OPERATION_SETTINGS.after).
// A message the business wrote itself (api.md "Who answered") is the lead's first response unless
// an earlier one is recorded (FirstResponses.record); its seconds are counted again when
// the lead turns out older than they assumed (a message that came before its lead).
import { Inject, Injectable } from "@nestjs/common";
import { CONFIG, type ReconciliationConfig } from "../../config/sections.js";
import { FirstResponses } from "../../leads/first-responses.js";
import { type LeadKey, LeadsRepository } from "../../leads/leads.repository.js";
import { InboxRegistry } from "../../providers/inbox-registry.js";
import type { JobContext } from "../job-context.js";
import { clampedUpdate, leadArrival } from "../lead-arrival.js";
import { jobKey, leadScopeKey } from "../operations.js";
import type { Processor } from "../processor.js";
import { SideEffectsRepository } from "../side-effects.repository.js";

@Injectable()
export class LeadUpsertProcessor implements Processor {
  readonly operation = "lead-upsert" as const;

  constructor(
    private readonly leads: LeadsRepository,
    private readonly firstResponses: FirstResponses,
    private readonly inboxes: InboxRegistry,
    private readonly sideEffects: SideEffectsRepository,
    @Inject(CONFIG.reconciliation) private readonly config: ReconciliationConfig,
  ) {}

  needsCredentials({ receipt }: JobContext): boolean {
    return this.inboxes.get(receipt.provider).needsCredentials.leadUpdate;
  }

  async run({ receipt, connection }: JobContext): Promise<void> {
    const key: LeadKey = {
      tenantId: connection.tenantId,
      connectionId: connection.id,
      provider: receipt.provider,
      externalLeadId: receipt.leadId,
    };
    // The first reply Leadgate stored before sending it (the lead's initial-response side effect).
    const ourReply = () =>
      this.sideEffects.sentText(connection.tenantId, jobKey("initial-response", leadScopeKey(receipt)));
    const update = clampedUpdate(
      await this.inboxes
        .get(receipt.provider)
        .leadUpdate(receipt, connection.accessToken, () => this.leads.storedHistory(key), ourReply),
      receipt.receivedAt,
    );
    const arrival = leadArrival(receipt, update, this.config.reconcileReplyMaxAgeSeconds);
    // Without contact data (a message before its lead) the lead is only made sure to exist.
    const lead = update.profile
      ? await this.leads.upsertContact(
          key,
          receipt.id,
          update.profile,
          update.lastEventAt,
          update.messages,
          arrival,
        )
      : await this.leads.touch(key, update.lastEventAt, update.messages, arrival);
    const leadId = lead.id;
    if (update.history) await this.leads.addHistory(key.tenantId, leadId, update.history);
    if (update.phoneConsent) {
      await this.leads.recordPhoneConsent(key.tenantId, leadId, update.phoneConsent, receipt.receivedAt);
    }
    if (update.businessAnsweredAt) {
      await this.firstResponses.record(
        key.tenantId,
        leadId,
        { at: update.businessAnsweredAt, by: "business" },
        connection.replies.businessHours,
      );
    }
    if (lead.responseStale) {
      await this.firstResponses.recount(key.tenantId, leadId, connection.replies.businessHours);
    }
  }
}
