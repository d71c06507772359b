// The alert book: opening, counting and resolving alerts. The code that records a cause raises its
// alert through here, in the transaction that records the cause, so no cause is recorded without
// its alert and a rolled-back cause leaves none:
//
//   job.dead              the job state machine's dies and recoveries (JobOutcomes: dead-job-alerts.ts)
//   destination.failing   a CRM destination's circuit opening and closing (CircuitEvents: destination-alerts.ts)
//   payload.conflict      ingest's conflict rows (src/ingestion/receipt-writer.ts)
//   connection.*          the connection store's status changes (src/connections/)
//   registration.error, webhooks.missing   provider registration and reconciliation
//   connection.silent     the silence sweep (silence-sweep.ts); and an operator's acknowledge and resolve
//   lead.unanswered       the unanswered-lead sweep (unanswered-sweep.ts)
//
//   await alerts.raise(tx, { tenantId, type: "connection.silent", connectionId, summary: "…" });
//   await alerts.clear(tx, { tenantId, type: "connection.silent", connectionId });
//
// Without a transaction (`db` undefined) a call runs in one of its own. raise opens the alert of
// the occurrence's group (type, connection, operation, error code), or counts on the group's
// unresolved one (count, lastSeenAt): the unique index alerts_unresolved_group_key keeps one
// unresolved alert per group and decides races. Once it is resolved, an occurrence within 10
// minutes re-opens it (the same alert, `open` again), a later one opens a new one. Opening,
// re-opening and resolving create their notification jobs (one per channel that is to be told:
// NotificationOutbox, which damps flapping per channel) in the same transaction: they leave once it
// commits, never when it rolls back.
import { Injectable } from "@nestjs/common";
import { type TenantScope, tenantParam } from "../auth/principal.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Tx } from "../database/transactions.js";
import {
  type AlertRow,
  groupKey,
  RAISE,
  REOPEN_WINDOW_SECONDS,
  RESOLVE,
  resolveInput,
} from "./alert-statements.js";
import type { AlertStatus, AlertType, AlertView } from "./alert-types.js";
import { NotificationOutbox } from "./notifications/notification-outbox.js";

export interface AlertOccurrence {
  tenantId: string;
  type: AlertType;
  connectionId?: string | null;
  operation?: string | null;
  errorCode?: string | null;
  /** What the alert is about beyond its group, to clear by (a destination's origin). */
  subject?: string | null;
  /** Readable, for people: never a secret, a token or form contents. */
  summary: string;
  /** Occurrences at once (default 1): the batch form counts a group's n occurrences with one upsert. */
  count?: number;
  /**
   * `count` is the condition's extent now (leads past target), not occurrences: an alert re-opened
   * by it takes this count and summary, instead of adding to the count of its earlier opening.
   */
  level?: boolean;
}

/** Which unresolved alerts a clear resolves: the tenant's of `type`, narrowed by each field given. */
export interface AlertCondition {
  tenantId: string;
  type: AlertType;
  connectionId?: string;
  operation?: string;
  errorCode?: string;
}

/** One group exactly: its alert's (type, connection, operation, error code), null fields included. */
export type AlertGroup = Pick<
  AlertOccurrence,
  "tenantId" | "type" | "connectionId" | "operation" | "errorCode"
>;

@Injectable()
export class AlertBook {
  constructor(
    private readonly prisma: PrismaService,
    private readonly notifications: NotificationOutbox,
  ) {}

  /** One occurrence of a condition; answers the id of the alert it opened, re-opened or counted on. */
  async raise(db: Tx | undefined, occurrence: AlertOccurrence): Promise<string> {
    const [id] = await this.raiseMany(db, [occurrence]);
    return id!;
  }

  /**
   * Many occurrences at once (the dead jobs of one statement): one upsert for all, one row per
   * group with the group's count (occurrences of one group are summed, the first one's summary
   * kept), in group order, so concurrent batches lock alert rows in one order. Answers, per
   * occurrence, the id of its group's alert.
   */
  async raiseMany(db: Tx | undefined, occurrences: readonly AlertOccurrence[]): Promise<string[]> {
    if (occurrences.length === 0) return [];
    if (!db) return this.prisma.$transaction((tx) => this.raiseMany(tx, occurrences));
    const groups = new Map<string, AlertOccurrence & { groupKey: string; count: number }>();
    for (const occurrence of occurrences) {
      const key = `${occurrence.tenantId}/${groupKey(occurrence)}`;
      const group = groups.get(key);
      if (group) group.count += occurrence.count ?? 1;
      else groups.set(key, { ...occurrence, groupKey: groupKey(occurrence), count: occurrence.count ?? 1 });
    }
    const rows = await db.$queryRawUnsafe<(AlertRow & { groupKey: string; opened: boolean })[]>(
      RAISE,
      JSON.stringify(
        [...groups.values()].map((group) => ({
          tenant_id: group.tenantId,
          type: group.type,
          connection_id: group.connectionId ?? null,
          operation: group.operation ?? null,
          error_code: group.errorCode ?? null,
          subject: group.subject ?? null,
          group_key: group.groupKey,
          summary: group.summary,
          count: group.count,
          level: group.level ?? false,
        })),
      ),
      REOPEN_WINDOW_SECONDS,
    );
    await this.notifications.add(
      db,
      rows.filter((row) => row.opened),
      "opened",
    );
    const ids = new Map(rows.map((row) => [`${row.tenantId}/${row.groupKey}`, row.id]));
    return occurrences.map((occurrence) => ids.get(`${occurrence.tenantId}/${groupKey(occurrence)}`)!);
  }

  /**
   * The group's unresolved alert says `summary` now (a condition whose extent changes, such as the
   * number of unanswered leads), without counting an occurrence; its `count` rises to
   * `occurrence.count` if that is more (the most at once while it is open: a count never falls).
   * Answers whether it changed.
   */
  async restate(db: Tx | undefined, occurrence: AlertOccurrence): Promise<boolean> {
    const rows = await (db ?? this.prisma).$executeRawUnsafe(
      `UPDATE alerts SET summary = $3, count = GREATEST(count, $4::int), last_seen_at = now(), updated_at = now()
       WHERE tenant_id = $1::uuid AND group_key = $2 AND status <> 'resolved'
         AND (summary IS DISTINCT FROM $3 OR count < $4::int)`,
      occurrence.tenantId,
      groupKey(occurrence),
      occurrence.summary,
      occurrence.count ?? 0,
    );
    return rows > 0;
  }

  /** The condition cleared: resolves its unresolved alerts (with their notifications); answers how many. */
  clear(db: Tx | undefined, condition: AlertCondition): Promise<number> {
    return this.resolve(db, [resolveInput(condition)]);
  }

  /** These groups' conditions cleared (each exactly its group): resolves their unresolved alerts; answers how many. */
  clearGroups(db: Tx | undefined, groups: readonly AlertGroup[]): Promise<number> {
    return this.resolve(
      db,
      groups.map((group) => resolveInput({ ...group, groupKey: groupKey(group) })),
    );
  }

  /**
   * What `subject` names is well again (a destination's origin: many tenants' connections use it):
   * resolves every tenant's unresolved alerts of `type` about it; answers how many.
   */
  clearSubject(db: Tx | undefined, type: AlertType, subject: string): Promise<number> {
    return this.resolve(db, [resolveInput({ tenantId: null, type, subject })]);
  }

  private async resolve(db: Tx | undefined, conditions: ReturnType<typeof resolveInput>[]): Promise<number> {
    if (conditions.length === 0) return 0;
    if (!db) return this.prisma.$transaction((tx) => this.resolve(tx, conditions));
    const resolved = await db.$queryRawUnsafe<AlertRow[]>(RESOLVE, JSON.stringify(conditions));
    await this.notifications.add(db, resolved, "resolved");
    return resolved.length;
  }

  /** The scope's alert with its connection's display name; undefined when the scope has no such alert. */
  async find(
    scope: TenantScope,
    id: string,
  ): Promise<(AlertView & { connectionName: string | null }) | undefined> {
    const { rows } = await this.prisma.pool.query<AlertView & { connectionName: string | null }>(
      `SELECT ${VIEW_COLUMNS}, c.display_name AS "connectionName"
       FROM alerts a LEFT JOIN connections c ON c.id = a.connection_id AND c.tenant_id = a.tenant_id
       WHERE a.id = $1::uuid AND ($2::uuid IS NULL OR a.tenant_id = $2::uuid)`,
      [id, tenantParam(scope)],
    );
    return rows[0];
  }

  /**
   * The scope's alerts, newest first (keyset on first_seen_at, id), filtered by status, type and
   * connection when given.
   */
  async list(
    scope: TenantScope,
    filter: { status?: AlertStatus; type?: AlertType; connectionId?: string },
    page: { take: number; after?: { at: Date; id: string } },
  ): Promise<AlertView[]> {
    const { rows } = await this.prisma.pool.query<AlertView>(
      `SELECT ${VIEW_COLUMNS} FROM alerts a
       WHERE ($1::uuid IS NULL OR a.tenant_id = $1::uuid)
         AND ($2::text IS NULL OR a.status = $2) AND ($3::text IS NULL OR a.type = $3)
         AND ($4::uuid IS NULL OR a.connection_id = $4::uuid)
         AND ($5::timestamptz IS NULL OR (a.first_seen_at, a.id) < ($5::timestamptz, $6::uuid))
       ORDER BY a.first_seen_at DESC, a.id DESC LIMIT $7`,
      [
        tenantParam(scope),
        filter.status ?? null,
        filter.type ?? null,
        filter.connectionId ?? null,
        page.after?.at ?? null,
        page.after?.id ?? null,
        page.take,
      ],
    );
    return rows;
  }

  /**
   * acknowledge (someone is on it: open → acknowledged) or resolve (by hand: → resolved, with the
   * resolution's notifications), inside the caller's transaction (with its audit row). Answers the
   * alert as it is after and whether this moved it (not when it was already past that status),
   * undefined when the scope has no such alert.
   */
  async settle(
    tx: Tx,
    scope: TenantScope,
    id: string,
    to: "acknowledged" | "resolved",
  ): Promise<{ alert: AlertView; moved: boolean } | undefined> {
    const rows = await tx.$queryRawUnsafe<(AlertView & { moved: boolean; openings: number })[]>(
      `WITH target AS (
         SELECT id FROM alerts WHERE id = $1::uuid AND ($2::uuid IS NULL OR tenant_id = $2::uuid) FOR UPDATE
       ), moved AS (
         UPDATE alerts a SET status = $3, updated_at = now(),
                acknowledged_at = CASE WHEN $3 = 'acknowledged' THEN now() ELSE a.acknowledged_at END,
                resolved_at = CASE WHEN $3 = 'resolved' THEN now() ELSE a.resolved_at END
         FROM target WHERE a.id = target.id AND a.status = ANY($4::text[])
         RETURNING ${VIEW_COLUMNS}, a.openings, true AS moved
       )
       SELECT * FROM moved
       UNION ALL
       SELECT ${VIEW_COLUMNS}, a.openings, false AS moved FROM alerts a JOIN target ON a.id = target.id WHERE NOT EXISTS (SELECT 1 FROM moved)`,
      id,
      tenantParam(scope),
      to,
      to === "acknowledged" ? ["open"] : ["open", "acknowledged"],
    );
    if (!rows[0]) return undefined;
    const { moved, openings, ...alert } = rows[0];
    if (moved && to === "resolved") await this.notifications.add(tx, [{ ...alert, openings }], "resolved");
    return { alert, moved };
  }
}

/** The columns of AlertView over `alerts a`. */
const VIEW_COLUMNS = `a.id, a.tenant_id AS "tenantId", a.type, a.status, a.connection_id AS "connectionId", a.operation,
  a.error_code AS "errorCode", a.count, a.first_seen_at AS "firstSeenAt", a.last_seen_at AS "lastSeenAt",
  a.acknowledged_at AS "acknowledgedAt", a.resolved_at AS "resolvedAt", a.summary`;
