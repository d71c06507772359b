// POST /admin/connections/{id}/sync (api.md `/sync` row): a run of the connection's registration
// (a provider-sync job) and reconciliation now. A call while the connection's run is queued or
// running joins it; a call after it finished starts a new one. Runs this route starts are limited
// per connection (SyncRuns); joining one, the connect's registration and periodic runs count for
// nothing. Every call commits with its audit row.
import { ApiProperty } from "@nestjs/swagger";
import { ConnectionAnswer } from "./connection-answers.js";
import { randomUUID } from "node:crypto";
import { Injectable } from "@nestjs/common";
import { type Principal, type TenantScope, tenantWhere } from "../../auth/principal.js";
import { AppError } from "../../common/app-error.js";
import { ConnectionStore } from "../../connections/connection-store.js";
import { ConnectionsService } from "../../connections/connections.service.js";
import { ProviderSyncJobs } from "../../connections/provider-sync.js";
import { Transactions, type Tx } from "../../database/transactions.js";
import { JobQueue } from "../../jobs/job-queue.js";
import { hasApi } from "../../providers/capabilities.js";
import type { Provider } from "../../providers/provider-event.js";
import { Reconciliation } from "../../reconciliation/reconciliation.service.js";
import { AuditRepository } from "../../audit/audit.repository.js";
import { ClientsRepository } from "../../clients/clients.repository.js";
import { connectionView, type ConnectionView } from "./connection-view.js";
import { RATE_WINDOW_SECONDS, RUNS_PER_WINDOW, SyncRuns } from "../../connections/sync-runs.js";

export class SyncRunView {
  @ApiProperty({ format: "uuid" })
  id!: string;

  @ApiProperty({ enum: ["queued", "running"] })
  status!: "queued" | "running";

  @ApiProperty({ description: "true: the call joined a run already queued or running" })
  coalesced!: boolean;
}

export class SyncAnswer extends ConnectionAnswer {
  @ApiProperty({ type: () => SyncRunView })
  run!: SyncRunView;
}

@Injectable()
export class ConnectionSync {
  constructor(
    private readonly transactions: Transactions,
    private readonly store: ConnectionStore,
    private readonly connections: ConnectionsService,
    private readonly syncs: ProviderSyncJobs,
    private readonly reconciliation: Reconciliation,
    private readonly runs: SyncRuns,
    private readonly audit: AuditRepository,
    private readonly queue: JobQueue,
    private readonly clients: ClientsRepository,
  ) {}

  /**
   * A disabled connection is `409 connection_disabled`; Static Forms, which has no provider API,
   * `409 sync_not_supported`. A connection Leadgate does not register (registration `manual`:
   * pasted credentials, Thumbtack header auth) keeps its registration as it is: its runs only
   * reconcile. Over the limit: `429 rate_limited` with Retry-After, nothing written.
   */
  async sync(by: Principal, scope: TenantScope, id: string): Promise<SyncAnswer> {
    const { answer, jobs } = await this.transactions.run(async (tx) => {
      // First: the row lock that serializes the calls of one connection until this one commits.
      const row = await this.store.lock(tx, scope, id);
      this.store.check(row, "syncNow");
      if (!hasApi(row.provider as Provider)) {
        throw new AppError(
          409,
          "sync_not_supported",
          `${row.provider} has no provider API: there is nothing to register or reconcile.`,
        );
      }
      const open = await this.runs.open(tx, row.tenantId, row.id);
      const record = (run: SyncAnswer["run"]) =>
        this.audit.record(tx, by, {
          action: "connection.sync",
          tenantId: row.tenantId,
          targetType: "connection",
          targetId: row.id,
          details: { run: run.id, coalesced: run.coalesced },
        });
      if (open) {
        const run = { ...open, coalesced: true };
        await record(run);
        return { answer: { connection: await this.view(tx, row), run }, jobs: [] };
      }
      const retryAfter = await this.runs.retryAfter(tx, row.tenantId, row.id);
      if (retryAfter !== undefined) {
        throw new AppError(
          429,
          "rate_limited",
          `At most ${RUNS_PER_WINDOW} syncs of a connection start in ${RATE_WINDOW_SECONDS} s; retry later.`,
          undefined,
          { "retry-after": String(retryAfter) },
        );
      }
      const runId = randomUUID();
      const target = { tenantId: row.tenantId, connectionId: row.id };
      const registration =
        row.registrationStatus !== "manual" ? await this.syncs.start(tx, target, "sync") : [];
      const reconciliation = await this.reconciliation.runNow(tx, row.tenantId, row.id, runId);
      await this.runs.create(tx, {
        id: runId,
        tenantId: row.tenantId,
        connectionId: row.id,
        apiKeyId: by.keyId,
        registrationJobId: registration[0]?.id ?? null,
        reconciliationJobId: reconciliation[0]?.id ?? null,
      });
      const run = { id: runId, status: "queued" as const, coalesced: false };
      await record(run);
      // The registration job made it `pending`: the answer shows the row as it is now.
      const updated = await tx.connection.findFirstOrThrow({ where: { ...tenantWhere(scope), id } });
      const connection = await this.view(tx, updated);
      return { answer: { connection, run }, jobs: [...registration, ...reconciliation] };
    });
    await this.queue.enqueue(jobs); // after commit; the dispatcher covers a failure here
    return answer;
  }

  private async view(tx: Tx, row: Parameters<typeof connectionView>[0]): Promise<ConnectionView> {
    return connectionView(
      row,
      this.connections.webhookUrl(row.provider as Provider, row.id, { type: "none" }),
      await this.clients.inherited(tx, row.clientId),
    );
  }
}
