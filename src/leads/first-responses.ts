// A lead's first response (api.md "Who answered", "speed to lead"): the first message to the customer,
// Leadgate's auto-reply or the business's own, and its seconds from the lead's creation on the wall
// clock and inside the connection's business hours. The one writer of the leads' first_response_*
// columns: set once, only ever corrected to an earlier response, counted again when the lead turns
// out older than the count assumed (UpsertedLead.responseStale).
import { Injectable } from "@nestjs/common";
import { SqlBatch } from "../common/sql-batch.js";
import type { Tx } from "../database/transactions.js";
import { Metrics } from "../observability/metrics.js";
import type { Provider } from "../providers/provider-event.js";
import { type BusinessHours, businessSeconds } from "../replies/business-hours.js";

/** The first message to the customer (api.md "Who answered"): Leadgate's auto-reply or the business's own. */
export interface FirstResponse {
  /** The provider's time of the message where it gives one, else the start of Leadgate's successful attempt. */
  at: Date;
  by: "auto" | "business";
}

/** A first response this call recorded: its seconds on the wall and business clocks. */
export interface RecordedResponse {
  provider: Provider;
  by: FirstResponse["by"];
  seconds: number;
  businessSeconds: number;
}

/** The time a lead's first response counts from: the provider's creation of the lead, else its first receipt. */
export const SINCE = "COALESCE(provider_created_at, received_at, created_at)";

/** A write that reads the lead's times and then updates the lead tries this often when they move meanwhile. */
const TRIES = 3;

type Query = <Row>(text: string, values: unknown[]) => Promise<Row[]>;

@Injectable()
export class FirstResponses {
  constructor(
    private readonly sql: SqlBatch,
    private readonly metrics: Metrics,
  ) {}

  /**
   * Records the lead's first response, unless one at or before `response.at` is stored: set once,
   * only ever corrected to an earlier response that shows up late (the UPDATE's WHERE decides, so
   * concurrent writers keep the earliest). The seconds count from the provider's creation of the
   * lead, on the wall clock and inside `hours` (the connection's business hours in effect; none:
   * the same). Answers them when this call set them, else undefined.
   */
  async record(
    tenantId: string,
    leadId: string,
    response: FirstResponse,
    hours: BusinessHours | null,
  ): Promise<RecordedResponse | undefined> {
    const recorded = await this.write(this.plain, tenantId, leadId, response, hours);
    if (recorded) this.observe(recorded);
    return recorded;
  }

  /**
   * `record` inside the caller's transaction, for a write that must commit with others
   * (mark-replied's audit entry and job), with the seconds counted before the transaction from the
   * creation time the caller read (`countResponse`): business hours are never counted while a
   * transaction is open. `"moved"` when the lead's creation time is no longer the one counted from
   * (the caller rolls back, reads and counts again). The caller observes the answer after the
   * commit (`observe`), so a rolled-back response is not counted.
   */
  async recordIn(
    tx: Tx,
    tenantId: string,
    leadId: string,
    response: FirstResponse,
    counted: CountedResponse,
  ): Promise<RecordedResponse | undefined | "moved"> {
    const query: Query = (text, values) => tx.$queryRawUnsafe(text, ...values);
    const times = await this.times(query, tenantId, leadId);
    if (!times || (times.at && times.at <= response.at)) return undefined;
    if (times.since.getTime() !== counted.since.getTime()) return "moved";
    const rows = await this.update(query, tenantId, leadId, response, counted, times.sinceText);
    if (!rows[0]) return "moved";
    return {
      provider: rows[0].provider,
      by: response.by,
      seconds: counted.seconds,
      businessSeconds: counted.inHours,
    };
  }

  /** The histogram counts responses recorded, a correction to an earlier one too. */
  observe(recorded: RecordedResponse): void {
    this.metrics.firstResponseSeconds.observe(
      { provider: recorded.provider, by: recorded.by },
      recorded.seconds,
    );
  }

  /**
   * Counts the recorded first response's seconds again from the lead's creation time as now known
   * (UpsertedLead.responseStale), unless the time or the response moved meanwhile (then read
   * again). The histogram keeps its one observation of the response.
   */
  async recount(tenantId: string, leadId: string, hours: BusinessHours | null): Promise<void> {
    for (let tried = 0; tried < TRIES; tried++) {
      const times = await this.times(this.plain, tenantId, leadId);
      if (!times?.at) return;
      const counted = countResponse(times.since, times.at, hours);
      const rows = await this.plain(
        `UPDATE leads SET first_response_seconds = $3, first_response_business_seconds = $4, updated_at = now()
         WHERE tenant_id = $1::uuid AND id = $2::uuid
           AND ${SINCE} = $5::timestamptz AND first_response_at = $6::timestamptz
         RETURNING id`,
        [tenantId, leadId, counted.seconds, counted.inHours, times.sinceText, times.atText],
      );
      if (rows[0]) return;
    }
  }

  private readonly plain: Query = <Row>(text: string, values: unknown[]) =>
    this.sql.query(text, values).then((result) => result.rows as Row[]);

  /**
   * Reads the lead's times, then writes the response if it is the earliest, while the creation time
   * is still the one read: one that moved earlier meanwhile (a concurrent lead-upsert, which saw no
   * response to count again) is read again. The last try writes whatever the time is then, so a
   * response is never lost to a moving time.
   */
  private async write(
    query: Query,
    tenantId: string,
    leadId: string,
    response: FirstResponse,
    hours: BusinessHours | null,
  ): Promise<RecordedResponse | undefined> {
    for (let tried = 1; ; tried++) {
      const times = await this.times(query, tenantId, leadId);
      if (!times || (times.at && times.at <= response.at)) return undefined;
      const counted = countResponse(times.since, response.at, hours);
      const rows = await this.update(
        query,
        tenantId,
        leadId,
        response,
        counted,
        tried < TRIES ? times.sinceText : null,
      );
      if (rows[0]) {
        return {
          provider: rows[0].provider,
          by: response.by,
          seconds: counted.seconds,
          businessSeconds: counted.inHours,
        };
      }
      if (tried === TRIES) return undefined;
    }
  }

  /** Writes the response if it is the earliest, while the creation time is `sinceText` (null: whatever it is). */
  private update(
    query: Query,
    tenantId: string,
    leadId: string,
    response: FirstResponse,
    counted: CountedResponse,
    sinceText: string | null,
  ) {
    return query<{ provider: Provider }>(
      `UPDATE leads SET first_response_at = $3, first_response_by = $4, first_response_seconds = $5,
              first_response_business_seconds = $6, updated_at = now()
       WHERE tenant_id = $1::uuid AND id = $2::uuid AND (first_response_at IS NULL OR first_response_at > $3)
         AND ($7::text IS NULL OR ${SINCE} = $7::timestamptz)
       RETURNING provider`,
      [tenantId, leadId, response.at, response.by, counted.seconds, counted.inHours, sinceText],
    );
  }

  /** The lead's creation time and recorded response (as text too: to compare them exactly when writing). */
  private async times(query: Query, tenantId: string, leadId: string) {
    const rows = await query<{ since: Date; at: Date | null; sinceText: string; atText: string | null }>(
      `SELECT ${SINCE} AS since, ${SINCE}::text AS "sinceText",
              first_response_at AS at, first_response_at::text AS "atText"
       FROM leads WHERE tenant_id = $1::uuid AND id = $2::uuid`,
      [tenantId, leadId],
    );
    return rows[0];
  }
}

/** A response's seconds from the lead's creation time `since`, on the wall clock and inside its hours. */
export interface CountedResponse {
  since: Date;
  seconds: number;
  inHours: number;
}

/** A response's seconds from `since` on the wall clock and inside `hours` (none: the same). */
export function countResponse(since: Date, at: Date, hours: BusinessHours | null): CountedResponse {
  const seconds = Math.max(0, (at.getTime() - since.getTime()) / 1000);
  return { since, seconds, inHours: hours ? businessSeconds(hours, since, at) : seconds };
}
