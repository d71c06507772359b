// The connection store: the one writer of the `connections` row (an architecture test keeps it so:
// src/connections/connection-writers.spec.ts). Every change is a named transition of
// lifecycle/connection-states.ts: the store checks that the connection may take it from the status
// it is in (else ConnectionTransitionRefused), writes the change, does what the status it enters does
// to the connection's jobs (jobEffect: a resume queues the held and blocked jobs again, a disable
// cancels the unfinished ones), and opens or resolves the connection alerts the change implies, all
// in the same transaction (src/jobs/state: JobStateMachine; src/alerts: AlertBook).
//
// Two kinds of write, one style each:
// - a change of status or grant (`apply`, `refuseCredentials`, `requireReauthorization`): the row is
//   locked (`lock`), the next state decided in TypeScript, the row written with the Prisma model API,
//   the jobs moved and the alerts raised, in one interactive transaction;
// - bookkeeping of a sub-state (registration, reconciliation, the refresh lease, the clean-up, a
//   re-sealed secret): one SQL statement whose `WHERE status = ANY(...)` is the transition's `from`
//   (the store's other files: connection-substates.ts).
import { Injectable } from "@nestjs/common";
import { AppError } from "../common/app-error.js";
import { AlertBook } from "../alerts/alert-book.js";
import { type TenantScope, tenantParam, tenantWhere } from "../auth/principal.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Tx } from "../database/transactions.js";
import { type Connection, Prisma } from "../generated/prisma/client.js";
import type { EnqueueableJob } from "../jobs/job-queue.js";
import { JobStateMachine } from "../jobs/state/job-state-machine.js";
import {
  alertChanges,
  allowedFrom,
  type ConnectionState,
  type ConnectionStatus,
  type JobEffect,
  jobEffect,
  next,
  type OAuthStatus,
  type TransitionDefinition,
  type TransitionName,
  TRANSITIONS,
} from "./lifecycle/connection-states.js";

/** A connection named by its tenant and id (worker paths: the job or sweep knows both). */
export interface ConnectionRef {
  tenantId: string;
  id: string;
}

/** The columns a transition may write besides the status and grant status (which `apply` decides). */
export type ConnectionChange = Omit<
  Prisma.ConnectionUncheckedUpdateInput,
  "status" | "oauthStatus" | "id" | "tenantId"
> & { status?: never; oauthStatus?: never };

/** A transition taken: the row as written, and what it did to the connection's jobs (jobEffect). */
export interface Applied {
  connection: Connection;
  /**
   * The held and blocked jobs it queued again (entering `active`): committed with the transition,
   * for the caller to hand to the queue after the commit (the dispatcher's poll covers a failure).
   */
  requeued: EnqueueableJob[];
  /** How many unfinished jobs it cancelled (entering `disabled`). */
  cancelled: number;
}

const notFound = () => new AppError(404, "not_found", "No such connection.");

const stateOf = (row: Pick<Connection, "status" | "oauthStatus">): ConnectionState => ({
  status: row.status as ConnectionStatus,
  oauthStatus: row.oauthStatus as OAuthStatus,
});

@Injectable()
export class ConnectionStore {
  constructor(
    private readonly prisma: PrismaService,
    private readonly alerts: AlertBook,
    private readonly jobStates: JobStateMachine,
  ) {}

  /** Inserts a new connection (`active`); the account's live connection is unique (`409 connection_exists`). */
  async insert(db: Tx | PrismaService, data: Prisma.ConnectionUncheckedCreateInput): Promise<Connection> {
    try {
      return await db.connection.create({ data: { ...data, status: "active" } });
    } catch (error) {
      if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002") {
        throw new AppError(
          409,
          "connection_exists",
          `A ${data.provider} connection for this account already exists.`,
        );
      }
      throw error;
    }
  }

  /** The scope's connection, locked for the rest of the transaction (one change at a time); 404 if none. */
  async lock(tx: Tx, scope: TenantScope, id: string): Promise<Connection> {
    const tenantId = tenantParam(scope);
    await tx.$queryRaw`SELECT 1 FROM connections
      WHERE id = ${id}::uuid AND (${tenantId}::uuid IS NULL OR tenant_id = ${tenantId}::uuid) FOR UPDATE`;
    const row = await tx.connection.findFirst({ where: { ...tenantWhere(scope), id } });
    if (!row) throw notFound();
    return row;
  }

  /** Whether `transition` may start from the connection's status now. */
  may(row: Pick<Connection, "status">, transition: TransitionName): boolean {
    return allowedFrom(transition).includes(row.status as ConnectionStatus);
  }

  /** Refuses (ConnectionTransitionRefused) unless `transition` may start from the connection's status now. */
  check(row: Pick<Connection, "status" | "oauthStatus">, transition: TransitionName): void {
    next(transition, stateOf(row));
  }

  /**
   * Takes `transition` on a connection `lock`ed in this transaction: refused unless its status
   * allows it; writes the next status and grant with `change`, moves the connection's jobs as the
   * status it enters says (jobEffect), and raises or clears the alerts the change implies. Jobs it
   * queued again are the caller's to enqueue after the commit (Applied.requeued).
   */
  async apply(
    tx: Tx,
    row: Connection,
    transition: TransitionName,
    change: ConnectionChange = {},
  ): Promise<Applied> {
    const before = stateOf(row);
    const after = next(transition, before);
    const definition: TransitionDefinition = TRANSITIONS[transition];
    const endLease = definition.replacesCredentials
      ? { refreshLeaseOwner: null, refreshLeaseUntil: null }
      : {};
    const updated = await tx.connection.update({
      where: { id: row.id, tenantId: row.tenantId },
      data: { ...change, ...endLease, status: after.status, oauthStatus: after.oauthStatus },
    });
    await this.raiseAlerts(tx, updated, before, after);
    const moved = await this.moveJobs(tx, updated, jobEffect(transition, before.status));
    return { connection: updated, ...moved };
  }

  /** The job state machine's transition `effect` over the connection's jobs, in the transition's transaction. */
  private async moveJobs(
    tx: Tx,
    row: Connection,
    effect: JobEffect | undefined,
  ): Promise<Omit<Applied, "connection">> {
    switch (effect) {
      case "resume":
        return { requeued: await this.jobStates.resumeConnection(tx, row.tenantId, row.id), cancelled: 0 };
      case "cancel":
        return { requeued: [], cancelled: await this.jobStates.cancelConnection(tx, row.tenantId, row.id) };
      case undefined:
        return { requeued: [], cancelled: 0 };
    }
  }

  /**
   * A provider refused the connection's credentials (401/403): `credential_error`, so calls with
   * them stop until a resume or reconnect. False when the connection is in no status to take it
   * (paused or disabled meanwhile: its jobs are held or cancelled anyway).
   */
  refuseCredentials(ref: ConnectionRef): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const row = await this.lockRef(tx, ref);
      if (!row || !this.may(row, "refuseCredentials")) return false;
      if (row.status !== "credential_error") await this.apply(tx, row, "refuseCredentials");
      return true;
    });
  }

  /**
   * The provider answered a refresh with `invalid_grant`: the owner must consent again. Only the
   * holder of the refresh lease records it (and so releases the lease); false for anyone else.
   */
  requireReauthorization(ref: ConnectionRef, leaseOwner: string): Promise<boolean> {
    return this.prisma.$transaction(async (tx) => {
      const row = await this.lockRef(tx, ref);
      if (!row || row.refreshLeaseOwner !== leaseOwner) return false;
      const release = { refreshLeaseOwner: null, refreshLeaseUntil: null };
      if (!this.may(row, "requireReauthorization")) {
        await tx.connection.update({ where: { id: row.id, tenantId: row.tenantId }, data: release });
        return false;
      }
      await this.apply(tx, row, "requireReauthorization", { ...release, oauthLastError: "invalid_grant" });
      return true;
    });
  }

  private async lockRef(tx: Tx, ref: ConnectionRef): Promise<Connection | undefined> {
    try {
      return await this.lock(tx, ref.tenantId, ref.id);
    } catch (error) {
      if (error instanceof AppError && error.status === 404) return undefined;
      throw error;
    }
  }

  private async raiseAlerts(
    tx: Tx,
    row: Connection,
    before: ConnectionState,
    after: ConnectionState,
  ): Promise<void> {
    const where = `Connection "${row.displayName}" (${row.provider} ${row.externalAccountId})`;
    for (const change of alertChanges(before, after)) {
      const target = { tenantId: row.tenantId, type: change.type, connectionId: row.id };
      if (change.kind === "clear") {
        await this.alerts.clear(tx, target);
      } else if (change.type === "connection.reauthorization_required") {
        await this.alerts.raise(tx, {
          ...target,
          summary: `${where} must be reconnected: the provider refused its grant (${row.oauthLastError ?? "invalid_grant"}).`,
        });
      } else {
        await this.alerts.raise(tx, {
          ...target,
          summary: `${where}: the provider refused its credentials. Its provider calls wait until it is resumed or reconnected.`,
        });
      }
    }
  }
}
