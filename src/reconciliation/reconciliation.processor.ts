// The `reconciliation` operation (scope: connection): one run of a connection's periodic
// reconciliation (a tick, a start-now, a /sync run), or one backfill (the job a backfill row names).
// Both scan the provider's list of leads and feed the unknown ones into the ingest path. A backfill
// row `counting` is a dry run's count that outlasted its request: its job only counts.
import { CONFIG, type ReconciliationConfig } from "../config/sections.js";
import { Inject, Injectable, Logger } from "@nestjs/common";
import { classify, CredentialError, PermanentError, WaitRequired } from "../common/outbound/errors.js";
import type { ConnectionJobContext, JobConnection } from "../jobs/job-context.js";
import type { Processor } from "../jobs/processor.js";
import type { ClaimedJob } from "../jobs/state/job-state-machine.js";
import { ConnectionSubstates } from "../connections/connection-substates.js";
import { Metrics } from "../observability/metrics.js";
import { capabilities } from "../providers/capabilities.js";
import { ListingUnavailable } from "../providers/lead-source.js";
import { BACKFILL_MAX_LEADS } from "./backfill-limits.js";
import { LeadScan, type Scan, type ScanTarget } from "./lead-scan.js";
import { MissedWebhooks } from "./missed-webhooks.js";
import { PulledIngest } from "./pulled-ingest.js";
import { type BackfillRow, ReconciliationRepository } from "./reconciliation.repository.js";

/** Leads one periodic run ingests at most; the next run takes the rest. */
const RUN_MAX_LEADS = 500;

@Injectable()
export class ReconciliationProcessor implements Processor<ConnectionJobContext> {
  readonly operation = "reconciliation" as const;
  private readonly logger = new Logger("reconciliation");

  constructor(
    private readonly scans: LeadScan,
    private readonly pulled: PulledIngest,
    private readonly records: ReconciliationRepository,
    private readonly substates: ConnectionSubstates,
    private readonly missed: MissedWebhooks,
    private readonly metrics: Metrics,
    @Inject(CONFIG.reconciliation) private readonly config: ReconciliationConfig,
  ) {}

  /** Static Forms has no API: its run only records `manual`, with no call. */
  needsCredentials({ connection }: ConnectionJobContext): boolean {
    return capabilities(connection.provider).api;
  }

  async run({ job, connection }: ConnectionJobContext): Promise<void> {
    const backfill = await this.records.backfillOfJob(connection.tenantId, job.id);
    if (!backfill) return this.periodic(connection);
    if (backfill.status === "counting") return this.count(job, connection, backfill);
    if (backfill.status === "running") return this.backfill(job, connection, backfill);
    // Finished already (a late duplicate delivery of its job): nothing is left to do.
  }

  /** Without a token there is nothing to call: manual (a connection with no pasted or OAuth credentials). */
  private withoutToken(connection: JobConnection): ListingUnavailable | undefined {
    return capabilities(connection.provider).api && connection.accessToken === undefined
      ? new ListingUnavailable("no_credentials")
      : undefined;
  }

  private target(connection: JobConnection): ScanTarget {
    return {
      tenantId: connection.tenantId,
      connectionId: connection.id,
      provider: connection.provider,
      account: { externalAccountId: connection.externalAccountId, token: connection.accessToken },
    };
  }

  /**
   * A periodic run: the leads of the last RECONCILE_LOOKBACK_SECONDS (never before the connection
   * was made: older leads are a backfill's), those younger than the grace period left to their
   * webhooks. Every unknown lead it stores was missed by the webhooks (MissedWebhooks.count).
   */
  private async periodic(connection: JobConnection): Promise<void> {
    const now = new Date();
    const kind = "periodic";
    try {
      const noToken = this.withoutToken(connection);
      if (noToken) throw noToken;
      const since = await this.records.connectionCreatedAt(connection.tenantId, connection.id);
      const lookback = new Date(now.getTime() - this.config.reconcileLookbackSeconds * 1000);
      const scan = await this.scans.scan(this.target(connection), {
        from: since && since > lookback ? since : lookback,
        to: now,
        settledBefore: new Date(now.getTime() - this.config.reconcileGraceSeconds * 1000),
        maxLeads: RUN_MAX_LEADS,
      });
      const outcome = await this.pulled.ingest(connection, scan.unknown, "reconcile", now);
      const missed = this.missed.count({
        tenantId: connection.tenantId,
        connectionId: connection.id,
        provider: connection.provider,
        ingestedLeadIds: outcome.ingestedLeadIds,
      });
      await this.substates.recordReconciliation(
        { tenantId: connection.tenantId, id: connection.id },
        {
          status: "active",
          leadsFound: scan.matched,
          missed,
        },
      );
      this.metrics.reconcileRuns.inc({ provider: connection.provider, kind, outcome: "active" });
      this.logger.log({
        msg: "reconciled",
        tenantId: connection.tenantId,
        connectionId: connection.id,
        leadsFound: scan.matched,
        ingested: outcome.ingestedLeadIds.length,
        missed,
      });
    } catch (error) {
      if (error instanceof ListingUnavailable) {
        await this.substates.recordReconciliation(
          { tenantId: connection.tenantId, id: connection.id },
          {
            status: "manual",
            error: error.code,
          },
        );
        this.metrics.reconcileRuns.inc({ provider: connection.provider, kind, outcome: "manual" });
        return;
      }
      if (!(error instanceof WaitRequired)) {
        await this.substates.recordReconciliation(
          { tenantId: connection.tenantId, id: connection.id },
          {
            status: "error",
            error: classify(error).code,
          },
        );
        this.metrics.reconcileRuns.inc({ provider: connection.provider, kind, outcome: "error" });
      }
      throw error;
    }
  }

  /** A backfill: every lead of its window, counted and ingested; its row shows the progress and end. */
  private async backfill(job: ClaimedJob, connection: JobConnection, backfill: BackfillRow): Promise<void> {
    try {
      const scan = await this.scanWindow(connection, backfill);
      const outcome = await this.pulled.ingest(connection, scan.unknown, "backfill");
      await this.records.updateBackfill(connection.tenantId, backfill.id, {
        matched: scan.matched,
        ingested: outcome.ingestedLeadIds.length,
        duplicates: scan.known + outcome.duplicateLeads,
        status: "done",
      });
      this.metrics.reconcileRuns.inc({ provider: connection.provider, kind: "backfill", outcome: "active" });
    } catch (error) {
      await this.failed(job, connection, backfill, error);
    }
  }

  /** A dry run's count that outlasted its request: the window's leads counted, nothing ingested. */
  private async count(job: ClaimedJob, connection: JobConnection, backfill: BackfillRow): Promise<void> {
    try {
      const scan = await this.scanWindow(connection, backfill);
      await this.records.updateBackfill(connection.tenantId, backfill.id, {
        matched: scan.matched,
        ingested: 0,
        duplicates: 0,
        status: "done",
      });
      this.metrics.reconcileRuns.inc({ provider: connection.provider, kind: "backfill", outcome: "active" });
    } catch (error) {
      await this.failed(job, connection, backfill, error);
    }
  }

  private async scanWindow(connection: JobConnection, backfill: BackfillRow): Promise<Scan> {
    const noToken = this.withoutToken(connection);
    if (noToken) throw noToken;
    return this.scans.scan(this.target(connection), {
      from: backfill.windowFrom,
      to: backfill.windowTo,
      maxLeads: BACKFILL_MAX_LEADS,
    });
  }

  /**
   * A backfill (or count) fails when its job will not run again: no list, a permanent error, or
   * the last attempt. A credential problem blocks the job until the connection is repaired; a quota
   * wait is no failure. Rethrows what the runner must see.
   */
  private async failed(
    job: ClaimedJob,
    connection: JobConnection,
    backfill: BackfillRow,
    error: unknown,
  ): Promise<void> {
    if (error instanceof WaitRequired) throw error;
    const code = error instanceof ListingUnavailable ? error.code : classify(error).code;
    const final =
      error instanceof ListingUnavailable ||
      error instanceof PermanentError ||
      (!(error instanceof CredentialError) && job.attempts >= job.maxAttempts);
    if (final) {
      await this.records.updateBackfill(connection.tenantId, backfill.id, {
        matched: backfill.matched,
        ingested: 0,
        duplicates: 0,
        status: "failed",
        error: code,
      });
      this.metrics.reconcileRuns.inc({ provider: connection.provider, kind: "backfill", outcome: "error" });
    }
    if (error instanceof ListingUnavailable) return;
    throw error;
  }
}
