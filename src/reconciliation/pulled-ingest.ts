// Events read from a provider (reconciliation, backfill) enter the webhooks' ingest path: the same
// idempotency key, payload digest and job plan, written by the same receipt writer. Only the
// receipt's `source` differs, and a lead too old for a first reply gets none.
import { CONFIG, type ReconciliationConfig } from "../config/sections.js";
import { Inject, Injectable } from "@nestjs/common";
import type { ConnectionSettings, ConnectionStatus } from "../connections/lifecycle/connection.js";
import { idempotencyKey, payloadDigest } from "../ingestion/idempotency-key.js";
import { planJobs } from "../ingestion/job-plan.js";
import { ReceiptWriter, type ReceiptSource } from "../ingestion/receipt-writer.js";
import { PrismaService } from "../database/prisma.service.js";
import type { ProviderEvent } from "../providers/provider-event.js";
import type { ReplySettings } from "../replies/reply-settings.js";
import type { UnknownLead } from "./lead-scan.js";

export interface PullTarget {
  tenantId: string;
  id: string;
  status: ConnectionStatus;
  settings: ConnectionSettings;
}

export interface PullOutcome {
  /** Leads for which at least one new receipt was stored. */
  ingestedLeadIds: string[];
  /** Leads all of whose events were stored already (a webhook won the race). */
  duplicateLeads: number;
}

@Injectable()
export class PulledIngest {
  constructor(
    private readonly writer: ReceiptWriter,
    private readonly prisma: PrismaService,
    @Inject(CONFIG.reconciliation) private readonly config: ReconciliationConfig,
  ) {}

  /** Writes each lead's events as one delivery would (the writer batches the leads together). */
  async ingest(
    connection: PullTarget,
    leads: UnknownLead[],
    source: Exclude<ReceiptSource, "webhook">,
    now = new Date(),
  ): Promise<PullOutcome> {
    const replyAfter = now.getTime() - this.config.reconcileReplyMaxAgeSeconds * 1000;
    // The client's and the tenant's defaults as stored now, once per run (off the webhooks' hot
    // path): what the connection inherits decides, as for a webhook, whether a lead gets a first reply.
    const plan = { settings: connection.settings, ...(await this.inherited(connection.id)) };
    const outcomes = await Promise.all(
      leads.map(async (lead) => {
        const written = await this.writer.write(
          lead.events.map((pulled) => {
            const event = this.withoutLateReply(pulled, replyAfter);
            const key = idempotencyKey(event);
            return {
              source,
              tenantId: connection.tenantId,
              connectionId: connection.id,
              event,
              idempotencyKey: key,
              payloadDigest: payloadDigest(event),
              jobs: planJobs(event, key, plan, connection.status === "paused"),
            };
          }),
        );
        return { leadId: lead.leadId, inserted: written.some((outcome) => outcome.inserted) };
      }),
    );
    return {
      ingestedLeadIds: outcomes.filter((lead) => lead.inserted).map((lead) => lead.leadId),
      duplicateLeads: outcomes.filter((lead) => !lead.inserted).length,
    };
  }

  private async inherited(connectionId: string) {
    const { rows } = await this.prisma.pool.query<{
      clientDefaults: ReplySettings;
      tenantDefaults: ReplySettings;
    }>(
      `SELECT cl.defaults AS "clientDefaults", t.defaults AS "tenantDefaults"
       FROM connections c JOIN clients cl ON cl.id = c.client_id JOIN tenants t ON t.id = c.tenant_id
       WHERE c.id = $1`,
      [connectionId],
    );
    return rows[0] ?? { clientDefaults: {}, tenantDefaults: {} };
  }

  /**
   * An event older than RECONCILE_REPLY_MAX_AGE_SECONDS may not start an automatic reply: the
   * customer asked too long ago for "thanks, we will call you" to make sense. Neither key nor
   * digest depend on it, so a late webhook of the event is still a duplicate (and makes no reply).
   */
  private withoutLateReply(event: ProviderEvent, replyAfter: number): ProviderEvent {
    return event.mayStartConversation && event.occurredAt.getTime() < replyAfter
      ? { ...event, mayStartConversation: false }
      : event;
  }
}
