// The statements of the alert book (alert-book.ts): the upsert that opens, re-opens or counts
// alerts, and the update that resolves them. Both take their rows as one jsonb parameter and touch alert rows
// in one order (tenant, group key), so two transactions that raise or resolve the same groups
// lock them in the same order.
import type { AlertType } from "./alert-types.js";

/** An alert a statement opened or resolved: what its notifications need. */
export interface AlertRow {
  id: string;
  tenantId: string;
  type: AlertType;
  /** Its openings so far (1, + 1 per re-opening): names the notifications of this opening. */
  openings: number;
}

/**
 * A condition that returns within this long of its alert's resolution re-opens that alert (api.md
 * "Alerts and notification channels": 10 minutes); later, it opens a new one.
 */
export const REOPEN_WINDOW_SECONDS = 600;

/**
 * The group of an alert, as `alerts.group_key` holds it: type, connection, operation and error code
 * joined by `|` (a missing one empty). The unique index alerts_unresolved_group_key is on
 * (tenant_id, group_key).
 */
export function groupKey(group: {
  type: AlertType;
  connectionId?: string | null;
  operation?: string | null;
  errorCode?: string | null;
}): string {
  return [group.type, group.connectionId ?? "", group.operation ?? "", group.errorCode ?? ""].join("|");
}

/**
 * Opens, re-opens or counts (count + n) one alert per row of $1 (one row per group):
 * - a group with an unresolved alert counts on it;
 * - a group without one whose alert resolved less than $2 seconds ago re-opens that alert (status
 *   `open` again, `openings` + 1, resolved_at and acknowledged_at cleared), counting on it (a `level`
 *   row, whose count is an extent now, sets its count and summary instead);
 * - any other group opens a new alert (`xmax = 0` holds exactly for rows this statement inserted:
 *   an ON CONFLICT update sets xmax).
 * The unique index alerts_unresolved_group_key decides races: two raises of a group that find no
 * unresolved alert both insert, and the second counts on the first's (ON CONFLICT), or both re-open
 * the same row, the second waiting for the first's lock and then counting on it (its CASEs read the
 * row as the first left it). Only raises that straddle the window's end (one re-opening, one
 * inserting) can meet at the index: the later one fails with a unique violation and its cause's
 * transaction is retried like any failed one. `opened` is true for a re-opening that a concurrent
 * raise had already done: what channels are told then is decided by their memory (channel-memory.ts),
 * which tells them nothing twice.
 */
export const RAISE = `
WITH o AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS o(tenant_id uuid, type text, connection_id uuid, operation text,
    error_code text, subject text, group_key text, summary text, count int, level boolean)
), recent AS (
  SELECT DISTINCT ON (o.tenant_id, o.group_key) r.id, o.count, o.level, o.summary
  FROM o JOIN alerts r ON r.tenant_id = o.tenant_id AND r.group_key = o.group_key
  WHERE r.status = 'resolved' AND r.resolved_at > now() - $2::int * interval '1 second'
    AND NOT EXISTS (SELECT 1 FROM alerts u WHERE u.tenant_id = o.tenant_id AND u.group_key = o.group_key
                      AND u.status <> 'resolved')
  ORDER BY o.tenant_id, o.group_key, r.resolved_at DESC
), locked AS (
  SELECT a.id, recent.count, recent.level, recent.summary FROM alerts a JOIN recent ON recent.id = a.id
  ORDER BY a.tenant_id, a.group_key
  FOR UPDATE OF a
), reopened AS (
  UPDATE alerts a SET
    openings = CASE WHEN a.status = 'resolved' THEN a.openings + 1 ELSE a.openings END,
    acknowledged_at = CASE WHEN a.status = 'resolved' THEN NULL ELSE a.acknowledged_at END,
    resolved_at = CASE WHEN a.status = 'resolved' THEN NULL ELSE a.resolved_at END,
    status = CASE WHEN a.status = 'resolved' THEN 'open' ELSE a.status END,
    count = CASE WHEN NOT locked.level THEN a.count + locked.count
                 WHEN a.status = 'resolved' THEN locked.count ELSE GREATEST(a.count, locked.count) END,
    summary = CASE WHEN locked.level AND a.status = 'resolved' THEN locked.summary ELSE a.summary END,
    last_seen_at = now(), updated_at = now()
  FROM locked WHERE a.id = locked.id
  RETURNING a.id, a.tenant_id, a.type, a.group_key, a.openings
), raised AS (
  INSERT INTO alerts AS a (tenant_id, type, connection_id, operation, error_code, subject, group_key, summary, count)
  SELECT tenant_id, type, connection_id, operation, error_code, subject, group_key, summary, count FROM o
  WHERE NOT EXISTS (SELECT 1 FROM reopened r WHERE r.tenant_id = o.tenant_id AND r.group_key = o.group_key)
  ORDER BY tenant_id, group_key
  ON CONFLICT (tenant_id, group_key) WHERE status <> 'resolved'
  DO UPDATE SET count = a.count + EXCLUDED.count, last_seen_at = now(), updated_at = now()
  RETURNING a.id, a.tenant_id, a.type, a.group_key, a.openings, (a.xmax = 0) AS opened
)
SELECT id, tenant_id AS "tenantId", type, group_key AS "groupKey", openings, true AS opened FROM reopened
UNION ALL
SELECT id, tenant_id AS "tenantId", type, group_key AS "groupKey", openings, opened FROM raised`;

/** A row of RESOLVE's $1: a null field matches anything. */
export function resolveInput(condition: {
  tenantId: string | null;
  type: AlertType;
  connectionId?: string | null;
  operation?: string | null;
  errorCode?: string | null;
  subject?: string | null;
  groupKey?: string;
}) {
  return {
    tenant_id: condition.tenantId,
    type: condition.type,
    connection_id: condition.connectionId ?? null,
    operation: condition.operation ?? null,
    error_code: condition.errorCode ?? null,
    subject: condition.subject ?? null,
    group_key: condition.groupKey ?? null,
  };
}

/** Resolves the unresolved alerts that match a row of $1 (locked first, in group order); answers them. */
export const RESOLVE = `
WITH target AS (
  SELECT a.id FROM alerts a
  JOIN jsonb_to_recordset($1::jsonb) AS c(tenant_id uuid, type text, connection_id uuid, operation text,
    error_code text, subject text, group_key text)
    ON (c.tenant_id IS NULL OR a.tenant_id = c.tenant_id) AND a.type = c.type
   AND (c.connection_id IS NULL OR a.connection_id = c.connection_id)
   AND (c.operation IS NULL OR a.operation = c.operation)
   AND (c.error_code IS NULL OR a.error_code = c.error_code)
   AND (c.subject IS NULL OR a.subject = c.subject)
   AND (c.group_key IS NULL OR a.group_key = c.group_key)
  WHERE a.status <> 'resolved'
  ORDER BY a.tenant_id, a.group_key
  FOR UPDATE OF a
)
UPDATE alerts a SET status = 'resolved', resolved_at = now(), updated_at = now()
FROM (SELECT DISTINCT id FROM target) t
WHERE a.id = t.id AND a.status <> 'resolved'
RETURNING a.id, a.tenant_id AS "tenantId", a.type, a.openings`;
