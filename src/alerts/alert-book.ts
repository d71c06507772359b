// The alert book: opening, counting and resolving alerts. Causes recorded in Postgres open and
// resolve their alerts themselves, in the statement that records them (triggers of migrations
// 20261202020000_alerts and 20261204000000_dead_job_alerts_per_statement: dead jobs, once per
// statement and group, connection status and grant, circuit openings, payload conflicts; and
// registration.error / webhooks.missing by the statements that record a registration outcome or a
// reconciliation run, through the same SQL functions). Conditions found elsewhere come
// through here, in the caller's transaction when they have one: a silent connection
// (src/jobs/silence-sweep.ts), an operator's acknowledge and resolve:
//
//   await alerts.raise(tx, { tenantId, type: "connection.silent", connectionId, summary: "…" });
//   await alerts.clear(tx, { tenantId, type: "connection.silent", connectionId });
//
// raise is one statement: the first occurrence of a group (type, connection, operation, error code)
// opens an alert and its notifications, a repeat counts on it (count, lastSeenAt), and after it
// resolved the next occurrence opens a new one. clear resolves the group's unresolved alert(s).
import { Injectable } from "@nestjs/common";
import { type TenantScope, tenantParam } from "../auth/principal.js";
import { PrismaService } from "../database/prisma.service.js";
import type { Tx } from "../database/transactions.js";
import type { AlertStatus, AlertType, AlertView } from "./alert-types.js";

export interface AlertOccurrence {
  tenantId: string;
  type: AlertType;
  connectionId?: string | null;
  operation?: string | null;
  errorCode?: string | null;
  /** Readable, for people: never a secret, a token or form contents. */
  summary: string;
}

/** Which unresolved alerts a clear resolves: the tenant's of `type`, narrowed by each field given. */
export interface AlertCondition {
  tenantId: string;
  type: AlertType;
  connectionId?: string;
  operation?: string;
  errorCode?: string;
}

@Injectable()
export class AlertBook {
  constructor(private readonly prisma: PrismaService) {}

  /** One occurrence of a condition; answers the id of the alert it opened or counted on. */
  async raise(tx: Tx | undefined, occurrence: AlertOccurrence): Promise<string> {
    const [row] = await (tx ?? this.prisma).$queryRawUnsafe<{ id: string }[]>(
      "SELECT alert_raise($1::uuid, $2, $3::uuid, $4, $5, $6)::text AS id",
      occurrence.tenantId,
      occurrence.type,
      occurrence.connectionId ?? null,
      occurrence.operation ?? null,
      occurrence.errorCode ?? null,
      occurrence.summary,
    );
    return row!.id;
  }

  /** The condition cleared: resolves its unresolved alerts (with their notifications); answers how many. */
  async clear(tx: Tx | undefined, condition: AlertCondition): Promise<number> {
    const [row] = await (tx ?? this.prisma).$queryRawUnsafe<{ resolved: number }[]>(
      "SELECT alert_clear($1::uuid, $2, $3::uuid, $4, $5) AS resolved",
      condition.tenantId,
      condition.type,
      condition.connectionId ?? null,
      condition.operation ?? null,
      condition.errorCode ?? null,
    );
    return row!.resolved;
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
   * acknowledge (someone is on it: open → acknowledged) or resolve (by hand: → resolved, which
   * sends the resolution's notifications), inside the caller's transaction (with its audit row).
   * Answers the alert as it is after and whether this moved it (not when it was already past that
   * status), undefined when the scope has no such alert.
   */
  async settle(
    tx: Tx,
    scope: TenantScope,
    id: string,
    to: "acknowledged" | "resolved",
  ): Promise<{ alert: AlertView; moved: boolean } | undefined> {
    const rows = await tx.$queryRawUnsafe<(AlertView & { moved: boolean })[]>(
      `WITH target AS (
         SELECT id FROM alerts WHERE id = $1::uuid AND ($2::uuid IS NULL OR tenant_id = $2::uuid) FOR UPDATE
       ), moved AS (
         UPDATE alerts a SET status = $3, updated_at = now(),
                acknowledged_at = CASE WHEN $3 = 'acknowledged' THEN now() ELSE a.acknowledged_at END,
                resolved_at = CASE WHEN $3 = 'resolved' THEN now() ELSE a.resolved_at END
         FROM target WHERE a.id = target.id AND a.status = ANY($4::text[])
         RETURNING ${VIEW_COLUMNS}, true AS moved
       )
       SELECT * FROM moved
       UNION ALL
       SELECT ${VIEW_COLUMNS}, false AS moved FROM alerts a JOIN target ON a.id = target.id WHERE NOT EXISTS (SELECT 1 FROM moved)`,
      id,
      tenantParam(scope),
      to,
      to === "acknowledged" ? ["open"] : ["open", "acknowledged"],
    );
    if (!rows[0]) return undefined;
    const { moved, ...alert } = rows[0];
    return { alert, moved };
  }
}

/** The columns of AlertView over `alerts a`. */
const VIEW_COLUMNS = `a.id, a.tenant_id AS "tenantId", a.type, a.status, a.connection_id AS "connectionId", a.operation,
  a.error_code AS "errorCode", a.count, a.first_seen_at AS "firstSeenAt", a.last_seen_at AS "lastSeenAt",
  a.acknowledged_at AS "acknowledgedAt", a.resolved_at AS "resolvedAt", a.summary`;
