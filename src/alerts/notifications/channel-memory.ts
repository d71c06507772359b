// What each channel was last told about each alert (alert_channel_states), and the rules that damp
// flapping with it (api.md "Alerts and notification channels"):
//
// - a channel is told only a change from what it was last told about the alert: an opening when it
//   was last told nothing or the resolution, a resolution when it was last told the opening (or
//   nothing: a channel created after the opening hears of the resolution);
// - at most one opening per alert group per channel per OPENING_WINDOW_SECONDS (10 minutes): a
//   re-opening inside the window is deferred to the window's end, and then told by the re-opening
//   sweep only if the alert is still open (reopening-sweep.ts).
//
// An alert's group has one alert at a time that can open again (a return within 10 minutes of its
// resolution re-opens the same alert, alert-statements.ts), so the memory is kept per alert.
// Every statement here runs with the alert's row locked by its transaction (the raise or resolution
// that decides, or the sweep's FOR UPDATE), so the decisions about one alert are made one at a time,
// in the order of its changes: Postgres decides races.
import type { Tx } from "../../database/transactions.js";
import type { AlertRow } from "../alert-statements.js";
import type { AlertTransition } from "./notification-key.js";

/** At most one opening per alert group per channel in this long (api.md: 10 minutes). */
export const OPENING_WINDOW_SECONDS = 600;

/** A channel to tell about an alert's transition, with the opening it is about. */
export interface Telling {
  alertId: string;
  tenantId: string;
  channelId: string;
  openings: number;
}

/**
 * The channels that receive the alerts of $1: the tenant's own and the platform's whose `types` match,
 * once active (an e-mail channel is told nothing until its address confirmed it).
 */
const TARGETS = `
  SELECT a.id AS alert_id, a.tenant_id, a.openings, ch.id AS channel_id, s.told, s.opened_at, s.deferred_until
  FROM jsonb_to_recordset($1::jsonb) AS a(id uuid, tenant_id uuid, type text, openings int)
  JOIN notification_channels ch
    ON (ch.tenant_id = a.tenant_id OR ch.tenant_id IS NULL) AND (ch.types IS NULL OR a.type = ANY (ch.types))
   AND ch.status = 'active'
  LEFT JOIN alert_channel_states s ON s.alert_id = a.id AND s.channel_id = ch.id`;

/**
 * The alerts of $1 opened (or re-opened): per channel, `tell` (last told nothing, or the resolution
 * of an opening told $2 seconds ago or more), `defer` (told the resolution of an opening inside the
 * window: the re-opening waits for the window's end) or nothing (last told this opening already).
 */
const OPENED = `
WITH target AS (${TARGETS}
), decided AS (
  SELECT *, CASE WHEN told IS NULL OR (told = 'resolved'
                       AND (opened_at IS NULL OR opened_at <= now() - $2::int * interval '1 second')) THEN 'tell'
                 WHEN told = 'resolved' THEN 'defer' END AS decision
  FROM target
), written AS (
  INSERT INTO alert_channel_states AS s (alert_id, channel_id, tenant_id, told, opened_at, deferred_until)
  SELECT alert_id, channel_id, tenant_id,
         CASE WHEN decision = 'tell' THEN 'opened' ELSE told END,
         CASE WHEN decision = 'tell' THEN now() ELSE opened_at END,
         CASE WHEN decision = 'tell' THEN NULL
              ELSE COALESCE(deferred_until, opened_at + $2::int * interval '1 second') END
  FROM decided WHERE decision IS NOT NULL
  ORDER BY alert_id, channel_id
  ON CONFLICT (alert_id, channel_id) DO UPDATE SET told = EXCLUDED.told, opened_at = EXCLUDED.opened_at,
    deferred_until = EXCLUDED.deferred_until, updated_at = now()
)
SELECT alert_id AS "alertId", tenant_id AS "tenantId", channel_id AS "channelId", openings
FROM decided WHERE decision = 'tell'`;

/**
 * The alerts of $1 resolved: each channel last told the opening (or nothing) is told the
 * resolution; one last told the resolution already (its re-opening is deferred, or was never told)
 * is told nothing, and a deferred re-opening then finds the alert resolved (nothing is told).
 */
const RESOLVED = `
WITH target AS (${TARGETS}
), decided AS (
  SELECT * FROM target WHERE told IS NULL OR told = 'opened'
), written AS (
  INSERT INTO alert_channel_states AS s (alert_id, channel_id, tenant_id, told)
  SELECT alert_id, channel_id, tenant_id, 'resolved' FROM decided
  ORDER BY alert_id, channel_id
  ON CONFLICT (alert_id, channel_id) DO UPDATE SET told = 'resolved', updated_at = now()
)
SELECT alert_id AS "alertId", tenant_id AS "tenantId", channel_id AS "channelId", openings FROM decided`;

/**
 * Records what the channels of `alerts` are told of their `transition` in `tx` (which holds the
 * alerts' rows locked: it opened or resolved them) and answers the tellings to send now.
 */
export function decide(tx: Tx, alerts: readonly AlertRow[], transition: AlertTransition): Promise<Telling[]> {
  const input = JSON.stringify(
    alerts.map((alert) => ({
      id: alert.id,
      tenant_id: alert.tenantId,
      type: alert.type,
      openings: alert.openings,
    })),
  );
  return transition === "opened"
    ? tx.$queryRawUnsafe<Telling[]>(OPENED, input, OPENING_WINDOW_SECONDS)
    : tx.$queryRawUnsafe<Telling[]>(RESOLVED, input);
}

/**
 * Locks the alerts with a deferred re-opening due at `now` (at most `limit`, in group order; one a
 * concurrent transaction holds is left for the next sweep), then, with the locks held, ends those
 * deferrals: a channel whose alert is still open is told the opening (its window starts again), one
 * whose alert resolved meanwhile is told nothing. Answers the tellings to send.
 */
export async function endDeferrals(
  tx: Tx,
  now: Date,
  limit: number,
): Promise<{ alerts: number; tellings: Telling[] }> {
  const locked = await tx.$queryRawUnsafe<{ id: string }[]>(
    `SELECT a.id FROM alerts a
     WHERE a.id IN (SELECT alert_id FROM alert_channel_states WHERE deferred_until <= $1::timestamptz
                    ORDER BY deferred_until LIMIT $2)
     ORDER BY a.tenant_id, a.group_key
     FOR UPDATE OF a SKIP LOCKED`,
    now,
    limit,
  );
  if (locked.length === 0) return { alerts: 0, tellings: [] };
  // A new statement: it sees what the raises and resolutions that held these locks committed.
  const tellings = await tx.$queryRawUnsafe<Telling[]>(
    `WITH due AS (
       SELECT s.alert_id, s.channel_id, s.tenant_id, a.openings, (a.status <> 'resolved' AND s.told = 'resolved') AS tell
       FROM alert_channel_states s JOIN alerts a ON a.id = s.alert_id AND a.tenant_id = s.tenant_id
       WHERE s.alert_id = ANY($1::uuid[]) AND s.deferred_until <= $2::timestamptz
     ), written AS (
       UPDATE alert_channel_states s SET deferred_until = NULL, updated_at = now(),
              told = CASE WHEN due.tell THEN 'opened' ELSE s.told END,
              opened_at = CASE WHEN due.tell THEN now() ELSE s.opened_at END
       FROM due WHERE s.alert_id = due.alert_id AND s.channel_id = due.channel_id
     )
     SELECT alert_id AS "alertId", tenant_id AS "tenantId", channel_id AS "channelId", openings FROM due WHERE tell`,
    locked.map((row) => row.id),
    now,
  );
  return { alerts: locked.length, tellings };
}
