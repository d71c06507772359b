// What a scenario left behind, counted from the outside: rows in its database, requests the fake
// provider API and CRM received, and the answers the senders got.
import { writeSync } from "node:fs";
import type pg from "pg";
import type { FakeServer } from "../../test/support/fake-server.js";
import { isSuccess, type Delivery, type Outcome } from "./load.js";

export interface Counts {
  /** Distinct events sent. */
  sent: number;
  /** Events that got a 2xx at least once. */
  acknowledged: number;
  /** Events with a receipt. */
  stored: number;
  /** Extra receipts, leads, replies or CRM deliveries beyond one per event. */
  duplicated: number;
  /** Acknowledged events missing a receipt, a job, a lead, a reply or a CRM delivery; jobs not succeeded. */
  lost: number;
  /** CRM requests repeating a webhook-id already received (allowed: the CRM dedupes on it). */
  redelivered: number;
  /** Failed job attempts by error code (what the faults cost: retries, timeouts). */
  failedAttempts: string;
}

/** Counts the outcome; call once every job has had time to finish. */
export async function count(
  sql: pg.Pool,
  deliveries: Delivery[],
  outcomes: Map<string, Outcome>,
  thumbtack: FakeServer,
  crm: FakeServer,
): Promise<Counts> {
  const ids = deliveries.map((delivery) => delivery.eventId);
  const perEvent = async (query: string) =>
    new Map((await sql.query<{ id: string; n: number }>(query, [ids])).rows.map((row) => [row.id, row.n]));
  const receipts = await perEvent(
    "SELECT lead_id AS id, count(*)::int AS n FROM receipts WHERE lead_id = ANY($1) GROUP BY lead_id",
  );
  const leads = await perEvent(
    "SELECT external_lead_id AS id, count(*)::int AS n FROM leads WHERE external_lead_id = ANY($1) GROUP BY external_lead_id",
  );
  const unfinished = await sql.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM jobs j JOIN receipts r ON r.id = j.receipt_id WHERE r.lead_id = ANY($1) AND j.status <> 'succeeded'",
    [ids],
  );
  const jobCounts = await perEvent(
    "SELECT r.lead_id AS id, count(*)::int AS n FROM jobs j JOIN receipts r ON r.id = j.receipt_id WHERE r.lead_id = ANY($1) GROUP BY r.lead_id",
  );
  const ours = new Set(ids);
  const replies = new Map<string, number>();
  for (const request of thumbtack.received.filter((r) => r.method === "POST")) {
    const id = /negotiations\/([^/]+)\/messages/.exec(request.path)?.[1] ?? "";
    if (ours.has(id)) replies.set(id, (replies.get(id) ?? 0) + 1);
  }
  // Every receipt id a 2xx answer named must exist: an acknowledged receipt that is not stored is lost.
  const answered = [...new Set([...outcomes.values()].flatMap((outcome) => outcome.receiptIds ?? []))];
  const found = await sql.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM receipts WHERE id = ANY($1::uuid[])",
    [answered],
  );
  // CRM requests per webhook-id, and the distinct webhook-ids per event (lead id in the body).
  const crmKeys = new Map<string, number>();
  const crmKeysPerEvent = new Map<string, number>();
  for (const request of crm.received) {
    const key = String(request.headers["webhook-id"]);
    crmKeys.set(key, (crmKeys.get(key) ?? 0) + 1);
    if (crmKeys.get(key) !== 1) continue;
    const lead = (JSON.parse(request.body) as { data: { leadId: string } }).data.leadId;
    crmKeysPerEvent.set(lead, (crmKeysPerEvent.get(lead) ?? 0) + 1);
  }

  const failures = await sql.query<{ code: string; n: number }>(
    "SELECT coalesce(error_code, outcome, 'unfinished') AS code, count(*)::int AS n FROM job_attempts WHERE outcome IS DISTINCT FROM 'succeeded' GROUP BY 1 ORDER BY 2 DESC",
  );
  const acknowledged = ids.filter((id) => outcomes.get(id)?.attempts.some((a) => isSuccess(a.status)));
  const extra = (map: Map<string, number>) =>
    [...map.values()].reduce((sum, n) => sum + Math.max(0, n - 1), 0);
  const missing = (map: Map<string, number>, expected = 1) =>
    acknowledged.filter((id) => (map.get(id) ?? 0) < expected).length;
  return {
    sent: ids.length,
    acknowledged: acknowledged.length,
    stored: receipts.size,
    duplicated:
      extra(receipts) +
      extra(leads) +
      extra(replies) +
      extra(crmKeysPerEvent) +
      [...jobCounts.values()].reduce((sum, n) => sum + Math.max(0, n - 3), 0),
    lost:
      missing(receipts) +
      missing(jobCounts, 3) +
      missing(leads) +
      missing(replies) +
      missing(crmKeysPerEvent) +
      unfinished.rows[0]!.n +
      (answered.length - found.rows[0]!.n),
    redelivered: [...crmKeys.values()].reduce((sum, n) => sum + n - 1, 0),
    failedAttempts: failures.rows.map((row) => `${row.code}x${row.n}`).join(",") || "none",
  };
}

export function report(scenario: string, counts: Counts, extra: Record<string, unknown> = {}): void {
  const fields = { ...counts, ...extra };
  const line = Object.entries(fields)
    .map(([key, value]) => `${key}=${String(value)}`)
    .join(" ");
  // Written at once: the run's forced exit after its last scenario would drop a buffered line.
  writeSync(1, `[faults] ${scenario}: ${line}\n`);
}
