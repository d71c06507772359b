// POST /admin/connections/{id}/sync (api.md `/sync` row): a run of the connection's registration
// (a provider-sync job) and reconciliation now. A call while the connection's newest run is queued
// joins it; a call while it is running (it may have read the provider already) makes one follow-up
// run, queued, whose jobs are made once the running one ended (SyncRunFollowUps, in the worker), and
// later calls join that one; a call after every run finished starts a new one. Runs this route
// makes, follow-ups included, are limited per connection (SyncRuns); joining one, the connect's
// registration and periodic runs count for nothing. Every call commits with its audit row.
import { ApiProperty } from "@nestjs/swagger";
import { ConnectionAnswer } from "./connection-answers.js";
import { randomUUID } from "node:crypto";
import { Injectable } from "@nestjs/common";
import { type Principal, type TenantScope, tenantWhere } from "../../auth/principal.js";
import { AppError } from "../../common/app-error.js";
import { ConnectionStore } from "../../connections/connection-store.js";
import { ConnectionsService } from "../../connections/connections.service.js";
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

  @ApiProperty({ description: "true: the call joined a run already queued (a follow-up included)" })
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
      if (open?.status === "queued") {
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
      const run = { id: runId, status: "queued" as const, coalesced: false };
      const created = { id: runId, tenantId: row.tenantId, connectionId: row.id, apiKeyId: by.keyId };
      if (open) {
        // Running: a follow-up, whose jobs are made once that run ended.
        const none = { registrationJobId: null, reconciliationJobId: null };
        await this.runs.create(tx, { ...created, ...none, followsRunId: open.id });
        await record(run);
        return { answer: { connection: await this.view(tx, row), run }, jobs: [] };
      }
      const { jobs, ...ids } = await this.reconciliation.syncRun(tx, row, runId);
      await this.runs.create(tx, { ...created, ...ids, followsRunId: null });
      await record(run);
      // The registration job made it `pending`: the answer shows the row as it is now.
      const updated = await tx.connection.findFirstOrThrow({ where: { ...tenantWhere(scope), id } });
      const connection = await this.view(tx, updated);
      return { answer: { connection, run }, jobs };
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
