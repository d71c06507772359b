// One pass over a provider's list of an account's leads within a window: which leads it lists,
// which of them Leadgate already has, and the events of the others, read from the provider.
import { Injectable } from "@nestjs/common";
import type { Provider, ProviderEvent } from "../providers/provider-event.js";
import { LeadSources } from "../providers/lead-sources.module.js";
import type { ListedLead, SourceAccount } from "../providers/lead-source.js";
import { ReconciliationRepository } from "./reconciliation.repository.js";

/** Pages of a provider's list read at most per scan (the list is newest first: the window ends sooner). */
const MAX_PAGES = 50;

export interface ScanTarget {
  tenantId: string;
  connectionId: string;
  provider: Provider;
  account: SourceAccount;
}

export interface ScanWindow {
  /** Leads created before this end the scan (the list is newest first). */
  from: Date;
  /** Leads created after this are not the window's. */
  to: Date;
  /**
   * Leads with an event after this are left for a later scan: their webhook may still be on its
   * way (reconciliation's grace period). Backfills take every lead of their window.
   */
  settledBefore?: Date;
  /** Stop after this many leads of the window. */
  maxLeads: number;
}

export interface UnknownLead {
  leadId: string;
  /** As its webhooks would have delivered them, oldest first. */
  events: ProviderEvent[];
}

export interface Scan {
  /** Leads of the window the provider listed (known and unknown). */
  matched: number;
  /** Of those, the ones that have a receipt already. */
  known: number;
  /** The others, to ingest. */
  unknown: UnknownLead[];
}

@Injectable()
export class LeadScan {
  constructor(
    private readonly sources: LeadSources,
    private readonly records: ReconciliationRepository,
  ) {}

  /**
   * Walks the list newest first until a lead older than the window, the last page, or `maxLeads`.
   * A known lead costs no provider call: its time is its earliest receipt's. An unknown lead's
   * events are read (one call for Yelp; Thumbtack's list carries them). Every call is paced by
   * the provider quota (ProviderApi), and may throw `WaitRequired`: the job waits and runs again.
   * Once `signal` is aborted (a request's time is up) no further provider call is made: the scan
   * throws the signal's reason.
   */
  async scan(target: ScanTarget, window: ScanWindow, signal?: AbortSignal): Promise<Scan> {
    const source = this.sources.get(target.provider);
    const scan: Scan = { matched: 0, known: 0, unknown: [] };
    let cursor: number | undefined = 0;
    for (let pages = 0; cursor !== undefined && pages < MAX_PAGES; pages++) {
      signal?.throwIfAborted();
      const page = await source.page(target.account, cursor, window.from);
      const known = await this.records.knownLeads(
        target.tenantId,
        target.connectionId,
        page.leads.map((lead) => lead.leadId),
      );
      for (const lead of page.leads) {
        const verdict = await this.place(lead, known.get(lead.leadId), window, target, signal);
        if (verdict === "older") return scan;
        if (verdict === "outside") continue;
        scan.matched++;
        if (verdict === "known") scan.known++;
        else scan.unknown.push(verdict);
        if (scan.matched >= window.maxLeads) return scan;
      }
      cursor = page.next;
    }
    return scan;
  }

  private async place(
    lead: ListedLead,
    knownSince: Date | undefined,
    window: ScanWindow,
    target: ScanTarget,
    signal: AbortSignal | undefined,
  ): Promise<"older" | "outside" | "known" | UnknownLead> {
    if (knownSince !== undefined) {
      const created = lead.createdAt ?? knownSince;
      return created < window.from ? "older" : created > window.to ? "outside" : "known";
    }
    signal?.throwIfAborted();
    const events = lead.events ?? (await this.sources.get(target.provider).events(target.account, lead));
    if (events.length === 0) return "outside";
    const times = events.map((event) => event.occurredAt.getTime());
    const created = lead.createdAt ?? new Date(Math.min(...times));
    if (created < window.from) return "older";
    if (created > window.to) return "outside";
    if (window.settledBefore && Math.max(...times) > window.settledBefore.getTime()) return "outside";
    return { leadId: lead.leadId, events };
  }
}
