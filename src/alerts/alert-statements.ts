// The statements of the alert book (alert-book.ts): the upsert that opens or counts alerts, and
// the update that resolves them. Both take their rows as one jsonb parameter and touch alert rows
// in one order (tenant, group key), so two transactions that raise or resolve the same groups
// lock them in the same order.
import type { AlertType } from "./alert-types.js";

/** An alert a statement opened or resolved: what its notifications need. */
export interface AlertRow {
  id: string;
  tenantId: string;
  type: AlertType;
}

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
 * Opens or counts (count + n) one alert per row of $1 (one row per group). `xmax = 0` holds exactly
 * for rows this statement inserted: those opened (an ON CONFLICT update sets xmax).
 */
export const RAISE = `
INSERT INTO alerts AS a (tenant_id, type, connection_id, operation, error_code, subject, group_key, summary, count)
SELECT tenant_id, type, connection_id, operation, error_code, subject, group_key, summary, count
FROM jsonb_to_recordset($1::jsonb) AS o(tenant_id uuid, type text, connection_id uuid, operation text,
  error_code text, subject text, group_key text, summary text, count int)
ORDER BY tenant_id, group_key
ON CONFLICT (tenant_id, group_key) WHERE status <> 'resolved'
DO UPDATE SET count = a.count + EXCLUDED.count, last_seen_at = now(), updated_at = now()
RETURNING a.id, a.tenant_id AS "tenantId", a.type, a.group_key AS "groupKey", (a.xmax = 0) AS opened`;

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
RETURNING a.id, a.tenant_id AS "tenantId", a.type`;
