// Provider sync (registration) jobs: keyed work of a connection and an action (docs/design.md "Jobs").
// Each request of an action makes a new job: its key holds the connection's registration sequence
// number, drawn when the job is made (`provider-sync:<connectionId>:<action>:<seq>`), so a re-sync
// tomorrow is a job of its own while one request never makes two.
import { Injectable } from "@nestjs/common";
import type { Tx } from "../database/transactions.js";
import { PrismaService } from "../database/prisma.service.js";
import type { EnqueueableJob } from "../jobs/job-queue.js";
import { jobKey } from "../jobs/operations.js";
import { JobStateMachine } from "../jobs/state/job-state-machine.js";
import { IN_PROGRESS } from "../jobs/state/job-states.js";
import { REGISTRATION_ACTIONS, type RegistrationAction } from "../providers/provider-registration.js";
import { ConnectionSubstates } from "./connection-substates.js";

const OPERATION = "provider-sync" as const;

/** How long before the sweep tries again when the sync started now does not succeed. */
export const SYNC_RETRY_SECONDS = 3_600;

export function providerSyncKey(connectionId: string, action: RegistrationAction, seq: number): string {
  return jobKey(OPERATION, `${connectionId}:${action}:${seq}`);
}

/** The action of a provider-sync job key (providerSyncKey); anything else is not one. */
export function actionOf(key: string): RegistrationAction {
  const action = key.split(":")[2];
  if (!(REGISTRATION_ACTIONS as readonly string[]).includes(action ?? "")) {
    throw new Error(`not a provider-sync job key: ${key}`);
  }
  return action as RegistrationAction;
}

export interface SyncTarget {
  tenantId: string;
  connectionId: string;
}

@Injectable()
export class ProviderSyncJobs {
  constructor(
    private readonly prisma: PrismaService,
    private readonly state: JobStateMachine,
    private readonly substates: ConnectionSubstates,
  ) {}

  /**
   * Makes the connection's provider-sync job for `action` inside the caller's transaction (the
   * caller enqueues the answer after its commit). A `sync` of a connection not registered yet
   * makes its registration `pending`. With `unlessBusy` (the sweep), nothing is made while another
   * provider-sync job of the connection is on its way (that one does the work); a person asking
   * (`/sync`, a rotation, a disconnect) always gets a job that runs now. Callers decide whether the
   * connection is registered by Leadgate at all (registration.ts).
   */
  async start(
    tx: Tx,
    target: SyncTarget,
    action: RegistrationAction,
    options: { unlessBusy?: boolean } = {},
  ): Promise<EnqueueableJob[]> {
    // First: the row lock that serializes starts of one connection until the caller commits.
    const seq = await this.substates.requestSync(
      tx,
      { tenantId: target.tenantId, id: target.connectionId },
      action,
      SYNC_RETRY_SECONDS,
    );
    if (seq === undefined) return [];
    if (options.unlessBusy) {
      const [busy] = await tx.$queryRawUnsafe<unknown[]>(
        `SELECT 1 FROM jobs WHERE tenant_id = $1::uuid AND connection_id = $2::uuid AND operation = $3
           AND status = ANY($4::text[]) LIMIT 1`,
        target.tenantId,
        target.connectionId,
        OPERATION,
        IN_PROGRESS,
      );
      if (busy) return []; // its number stays unused: numbers only tell requests apart
    }
    return this.state.create(
      [
        {
          tenantId: target.tenantId,
          connectionId: target.connectionId,
          operation: OPERATION,
          jobKey: providerSyncKey(target.connectionId, action, seq),
        },
      ],
      tx,
    );
  }

  /** The sweep's `sync`, in a transaction of its own, unless one is on its way. */
  startSweep(target: SyncTarget): Promise<EnqueueableJob[]> {
    return this.prisma.$transaction((tx) => this.start(tx, target, "sync", { unlessBusy: true }));
  }
}
