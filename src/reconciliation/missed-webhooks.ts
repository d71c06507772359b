// Missed-webhook detection: THE place where leads that no webhook delivered are
// counted. The alerting issue raises `webhooks.missing` from what this records.
import { Injectable, Logger } from "@nestjs/common";
import { Metrics } from "../observability/metrics.js";
import type { Provider } from "../providers/provider-event.js";

export interface MissedLeadsOfRun {
  tenantId: string;
  connectionId: string;
  provider: Provider;
  /** Leads of the run for which reconciliation stored at least one new receipt. */
  ingestedLeadIds: string[];
}

@Injectable()
export class MissedWebhooks {
  private readonly logger = new Logger("missed-webhooks");

  constructor(private readonly metrics: Metrics) {}

  /**
   * Counts the leads a periodic reconciliation run found that no webhook had delivered within the
   * grace period (RECONCILE_GRACE_SECONDS: younger leads are left to their webhook, see LeadScan),
   * i.e. every lead the run stored a receipt for; a lead whose webhook won the race stored nothing
   * and is not counted. Adds them to `leadgate_reconcile_missed_leads_total{provider}` and answers
   * the count (the connection's `reconciliation.missedByWebhooks`).
   */
  count(run: MissedLeadsOfRun): number {
    const missed = new Set(run.ingestedLeadIds).size;
    if (missed > 0) {
      this.metrics.missedLeads.inc({ provider: run.provider }, missed);
      this.logger.warn({
        msg: "leads found by reconciliation that no webhook delivered",
        tenantId: run.tenantId,
        connectionId: run.connectionId,
        provider: run.provider,
        missed,
      });
    }
    return missed;
  }
}
