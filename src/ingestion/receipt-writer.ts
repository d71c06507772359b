import { CONFIG, type IngestConfig } from "../config/sections.js";
import { Inject, Injectable, Logger, type OnApplicationShutdown } from "@nestjs/common";
import { AlertBook } from "../alerts/alert-book.js";
import { AppError, unavailable } from "../common/app-error.js";
import { BatcherFull, NaturalBatcher } from "../common/natural-batcher.js";
import { PrismaService } from "../database/prisma.service.js";
import { INGEST_VERSION } from "../connections/connections.repository.js";
import { outboxNotifySql } from "../jobs/job-outbox.js";
import { BatchSummary } from "../observability/batch-summary.js";
import { insertJobsSql } from "../jobs/state/job-state-machine.js";
import type { ProviderEvent } from "../providers/provider-event.js";
import type { PlannedJob } from "./job-plan.js";

/** How an event reached Leadgate: a provider's webhook, or a pull by reconciliation or backfill. */
export type ReceiptSource = "webhook" | "reconcile" | "backfill";

export interface ReceiptInput {
  /** Default `webhook`. Only the receipt shows it: keys, jobs and payload are the same either way. */
  source?: ReceiptSource;
  tenantId: string;
  connectionId: string;
  event: ProviderEvent;
  idempotencyKey: string;
  payloadDigest: string;
  jobs: PlannedJob[];
  /**
   * The connection's version as the caller read it (IngestConnectionRow.version), when that read
   * may be stale (a cached row): the statement then writes the event only if the connection and its
   * tenant are still at this version, and answers StaleConnection otherwise. Absent: not checked.
   */
  connectionVersion?: string;
}

/**
 * A delivery written with a connection version that is no longer the stored one: nothing of it was
 * written. Its caller reads the connection again and decides the delivery on that.
 */
export class StaleConnection extends Error {
  constructor() {
    super("the connection changed since it was read");
  }
}

export interface ReceiptOutcome {
  receiptId: string;
  /** false: the event was already stored (its duplicate count was incremented). */
  inserted: boolean;
  /** A duplicate whose payload digest differs from the stored one (recorded in payload_conflicts). */
  conflict: boolean;
}

interface Row {
  i: number;
  receipt_id: string;
  inserted: boolean;
  /** A duplicate whose digest differs: the stored digest (else null). */
  conflict_digest: string | null;
  /** Not written: its connection version is not the stored one (receipt_id null). */
  stale: boolean;
}

const MAX_BATCH = 400;
const DEADLOCK_RETRIES = 2;

const dedupeKey = (input: ReceiptInput) =>
  `${input.event.provider}\n${input.event.accountId}\n${input.idempotencyKey}`;

/** An error that comes from one delivery's data, not from the database being unavailable. */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return error instanceof RangeError || (typeof code === "string" && /^(22|23)/.test(code));
}

/**
 * Writes receipts and their jobs: one statement per batch of deliveries, so one round trip and one
 * commit decide many deliveries (natural batching, see NaturalBatcher). The statement is SQL on
 * the Prisma client's own pool: on this path Prisma's per-query cost was the API's largest.
 *
 * The statement inserts every receipt with ON CONFLICT on (provider, account_id, idempotency_key):
 * the unique constraint decides every race, between the items of a batch, API replicas and
 * retries alike. A new receipt's jobs are inserted in the same statement (unique job_key), so
 * receipt and jobs commit together or not at all; a known receipt gets its duplicate count
 * incremented. The same statement tells the workers' dispatchers of the new runnable jobs (the job
 * outbox, src/jobs/job-outbox.ts: a NOTIFY that Postgres delivers at commit and never after a
 * rollback), so the API does not talk to BullMQ at ingest and a crash after the commit loses no
 * hand-over. All events of one delivery are in one statement. A duplicate whose digest differs
 * is a conflict: only a batch that has one takes a second step, one transaction that writes the
 * conflict rows and raises their payload.conflict alerts (AlertBook) together, before any of its
 * deliveries is answered; a delivery whose conflict could not be recorded gets a 503 (its retry is
 * a duplicate again, and records it). Nothing is answered before the statement commits; if it fails, its deliveries get a
 * 503 and nothing of them is written. A key appears at most once per statement (a delivery
 * repeating a key already in the batch waits for the next one), and a delivery whose data the
 * database refuses is split off, so it cannot take the other deliveries of its batch down with it.
 * At most INGEST_QUEUE_LIMIT deliveries wait behind the statement in flight; more get a 503 with
 * Retry-After at once (nothing written), so a slow database costs bounded memory.
 */
@Injectable()
export class ReceiptWriter implements OnApplicationShutdown {
  private readonly logger = new Logger("receipts");
  private readonly summary = new BatchSummary(({ stale, ms, ...counts }) =>
    this.logger.log({
      msg: "receipts written",
      ...counts,
      ...(stale! > 0 ? { stale } : {}),
      ms: Math.round(ms! * 10) / 10,
    }),
  );
  private readonly batcher: NaturalBatcher<ReceiptInput[], ReceiptOutcome[] | Error>;

  constructor(
    private readonly prisma: PrismaService,
    private readonly alerts: AlertBook,
    @Inject(CONFIG.ingest) config: IngestConfig,
  ) {
    this.batcher = new NaturalBatcher<ReceiptInput[], ReceiptOutcome[] | Error>(
      (deliveries) => this.writeBatch(deliveries),
      {
        maxBatch: MAX_BATCH,
        maxWaiting: config.ingestQueueLimit,
        admit: () => {
          const seen = new Set<string>();
          return (delivery) => {
            const keys = delivery.map(dedupeKey);
            if (keys.some((key) => seen.has(key))) return false;
            keys.forEach((key) => seen.add(key));
            return true;
          };
        },
      },
    );
  }

  /**
   * Writes one delivery's events together; one outcome per event, in order. Throws StaleConnection
   * when the events carry a connection version that is no longer stored (then nothing was written).
   */
  async write(events: ReceiptInput[]): Promise<ReceiptOutcome[]> {
    // The same event twice in one delivery is one event: write it once, answer both with it.
    const unique =
      events.length === 1 ? events : [...new Map(events.map((event) => [dedupeKey(event), event])).values()];
    const outcomes = await this.batcher.submit(unique).catch((error: unknown) => {
      if (!(error instanceof BatcherFull)) throw error;
      this.logger.warn({ msg: "receipt queue full; answering 503", waiting: error.waiting });
      return unavailable("The receipt store");
    });
    if (outcomes instanceof Error) throw outcomes;
    if (unique === events) return outcomes;
    const byKey = new Map(unique.map((event, index) => [dedupeKey(event), outcomes[index]!]));
    return events.map((event) => byKey.get(dedupeKey(event))!);
  }

  private async writeBatch(deliveries: ReceiptInput[][]): Promise<(ReceiptOutcome[] | Error)[]> {
    try {
      const items = deliveries.flat();
      const started = performance.now();
      const rows = await this.execute(items);
      const unrecorded = await this.recordConflicts(items, rows);
      this.logBatch(deliveries.length, rows, performance.now() - started);
      return this.split(deliveries, rows, unrecorded);
    } catch (error) {
      if (!isDataError(error)) {
        const failure = this.failed(error, deliveries.length); // logged once for the whole batch
        return deliveries.map(() => failure);
      }
      if (deliveries.length === 1) return [this.failed(error, 1)];
      // One delivery's data was refused: write each alone so only that one fails.
      const results: (ReceiptOutcome[] | Error)[] = [];
      for (const delivery of deliveries) results.push(...(await this.writeBatch([delivery])));
      return results;
    }
  }

  /**
   * The conflicts of a batch (duplicates whose digest differs), if it has any: their rows and their
   * payload.conflict alerts (one occurrence each, counted per connection) in one transaction.
   * Answers the error for the deliveries that had one when that transaction failed.
   */
  private async recordConflicts(items: ReceiptInput[], rows: Row[]): Promise<AppError | undefined> {
    const conflicts = rows.filter((row) => row.conflict_digest !== null);
    if (conflicts.length === 0) return undefined;
    try {
      await this.prisma.$transaction(async (tx) => {
        const recorded = await tx.$queryRawUnsafe<
          { tenantId: string; receiptId: string; connectionId: string; provider: string }[]
        >(
          CONFLICTS,
          JSON.stringify(
            conflicts.map((row) => ({
              tenant_id: items[row.i]!.tenantId,
              receipt_id: row.receipt_id,
              idempotency_key: items[row.i]!.idempotencyKey,
              stored_digest: row.conflict_digest,
              incoming_digest: items[row.i]!.payloadDigest,
            })),
          ),
        );
        await this.alerts.raiseMany(
          tx,
          recorded.map((conflict) => ({
            tenantId: conflict.tenantId,
            type: "payload.conflict",
            connectionId: conflict.connectionId,
            errorCode: "digest_mismatch",
            summary: `A ${conflict.provider} event arrived again with different content (receipt ${conflict.receiptId}). The first version was kept.`,
          })),
        );
      });
      return undefined;
    } catch (error) {
      return this.failed(error, new Set(conflicts.map((row) => row.i)).size);
    }
  }

  /**
   * Maps the statement's rows back to deliveries (a delivery with a conflict that could not be
   * recorded: `unrecorded`; one whose connection version is stale: StaleConnection).
   */
  private split(
    deliveries: ReceiptInput[][],
    rows: Row[],
    unrecorded: AppError | undefined,
  ): (ReceiptOutcome[] | Error)[] {
    const outcomes = new Map<number, ReceiptOutcome | "stale">();
    for (const row of rows) {
      outcomes.set(
        row.i,
        row.stale
          ? "stale"
          : { receiptId: row.receipt_id, inserted: row.inserted, conflict: row.conflict_digest !== null },
      );
    }
    let offset = 0;
    return deliveries.map((delivery) => {
      const own = delivery.map(() => outcomes.get(offset++));
      if (own.includes("stale")) return new StaleConnection();
      if (!own.every((outcome): outcome is ReceiptOutcome => outcome !== undefined)) {
        return this.failed(new Error("the receipt statement answered no row for an event"), 1);
      }
      return unrecorded && own.some((outcome) => outcome.conflict) ? unrecorded : own;
    });
  }

  /** The batch in the info line of its interval (BatchSummary); each delivery's own line is at debug. */
  private logBatch(deliveries: number, rows: Row[], ms: number): void {
    const stored = rows.filter((row) => row.inserted).length;
    const stale = rows.filter((row) => row.stale).length;
    this.summary.add(
      {
        deliveries,
        events: rows.length,
        stored,
        duplicates: rows.length - stored - stale,
        conflicts: rows.filter((row) => row.conflict_digest !== null).length,
        stale,
      },
      ms,
    );
  }

  onApplicationShutdown(): void {
    this.summary.flush();
  }

  private failed(error: unknown, deliveries: number): AppError {
    this.logger.error({
      msg: "receipt write failed; answering 503",
      deliveries,
      error: error instanceof Error ? error.message.split("\n")[0] : String(error),
      code: (error as { code?: unknown }).code,
    });
    return unavailable("The receipt store");
  }

  private async execute(items: ReceiptInput[]): Promise<Row[]> {
    const input = items.map((item, i) => ({
      i,
      tenant_id: item.tenantId,
      connection_id: item.connectionId,
      provider: item.event.provider,
      account_id: item.event.accountId,
      idempotency_key: item.idempotencyKey,
      event_id: item.event.eventId ?? null,
      lead_id: item.event.leadId,
      kind: item.event.kind,
      status: item.event.kind === "ignored" ? "ignored" : "accepted",
      occurred_at: item.event.occurredAt.toISOString(),
      payload_digest: item.payloadDigest,
      raw_payload: item.event.payload,
      source: item.source ?? "webhook",
      connection_version: item.connectionVersion ?? null,
      jobs: item.jobs.map((job) => ({
        job_key: job.jobKey,
        operation: job.operation,
        status: job.status,
        max_attempts: job.maxAttempts,
      })),
    }));
    for (let attempt = 0; ; attempt++) {
      try {
        // Named: each connection parses the statement once, and its one jsonb parameter leaves
        // nothing for a per-run plan to use, so Postgres settles on one plan (no planning per batch).
        const query = { name: "ingest-receipts", text: STATEMENT, values: [JSON.stringify(input)] };
        return (await this.prisma.pool.query<Row>(query)).rows;
      } catch (error) {
        // Two batches locking the same keys in another order: the database picked one to retry.
        if (attempt < DEADLOCK_RETRIES && (error as { code?: unknown }).code === "40P01") continue;
        throw error;
      }
    }
  }
}

// Rows are inserted in key order, so concurrent batches lock keys in one order (no deadlock cycles).
// `xmax = 0` holds exactly for rows this statement inserted (an ON CONFLICT update sets xmax).
const STATEMENT = `
WITH input AS (
  SELECT * FROM jsonb_to_recordset($1::jsonb) AS x(
    i int, tenant_id uuid, connection_id uuid, provider text, account_id text, idempotency_key text,
    event_id text, lead_id text, kind text, status text, occurred_at timestamptz, payload_digest text,
    raw_payload jsonb, source text, connection_version text, jobs jsonb)
),
-- Events read with a cached connection (connection_version set) whose connection or tenant changed
-- since (src/connections/connections.repository.ts): written not at all, answered stale.
stale AS (
  SELECT i FROM input x
  WHERE x.connection_version IS NOT NULL
    AND x.connection_version IS DISTINCT FROM
        (SELECT ${INGEST_VERSION("c")} FROM connections c WHERE c.id = x.connection_id)
),
current AS (
  SELECT * FROM input WHERE i NOT IN (SELECT i FROM stale)
),
receipt AS (
  INSERT INTO receipts AS r (tenant_id, connection_id, provider, account_id, idempotency_key, event_id, lead_id,
                             kind, status, occurred_at, payload_digest, source)
  SELECT tenant_id, connection_id, provider, account_id, idempotency_key, event_id, lead_id,
         kind, status, occurred_at, payload_digest, source
  FROM current ORDER BY provider, account_id, idempotency_key
  ON CONFLICT (provider, account_id, idempotency_key)
  DO UPDATE SET duplicate_count = r.duplicate_count + 1, last_duplicate_at = now()
  RETURNING r.id, r.provider, r.account_id, r.idempotency_key, r.payload_digest, r.received_at, (r.xmax = 0) AS inserted
),
matched AS (
  SELECT current.i, current.tenant_id, current.connection_id, current.idempotency_key, current.jobs,
         current.raw_payload, current.payload_digest AS incoming_digest, receipt.payload_digest AS stored_digest,
         receipt.id AS receipt_id, receipt.received_at, receipt.inserted
  FROM current JOIN receipt USING (provider, account_id, idempotency_key)
),
-- The payload beside its new receipt, in the same statement (receipt_payloads is partitioned by month).
payload AS (
  INSERT INTO receipt_payloads (receipt_id, tenant_id, received_at, payload)
  SELECT receipt_id, tenant_id, received_at, raw_payload FROM matched WHERE inserted AND raw_payload IS NOT NULL
),
job AS (
  ${insertJobsSql(`SELECT m.tenant_id, m.connection_id, m.receipt_id, j.operation, j.job_key, j.status, j.max_attempts
  FROM matched m CROSS JOIN LATERAL jsonb_to_recordset(m.jobs) AS j(job_key text, operation text, status text, max_attempts int)
  WHERE m.inserted`)}
),
-- The job outbox (src/jobs/job-outbox.ts): the runnable new jobs' ids, told to the dispatchers at commit.
notified AS (
  ${outboxNotifySql("SELECT id FROM job WHERE status = 'queued'")}
)
SELECT m.i, m.receipt_id, m.inserted,
       CASE WHEN NOT m.inserted AND m.stored_digest <> m.incoming_digest THEN m.stored_digest END AS conflict_digest,
       false AS stale
FROM matched m CROSS JOIN (SELECT count(*) FROM notified) AS told
UNION ALL
SELECT s.i, NULL, false, NULL, true FROM stale s`;

/** A batch's conflict rows, answered with what their alerts say (the receipt's connection and provider). */
const CONFLICTS = `
WITH conflict AS (
  INSERT INTO payload_conflicts (tenant_id, receipt_id, idempotency_key, stored_digest, incoming_digest)
  SELECT tenant_id, receipt_id, idempotency_key, stored_digest, incoming_digest
  FROM jsonb_to_recordset($1::jsonb) AS c(tenant_id uuid, receipt_id uuid, idempotency_key text,
    stored_digest text, incoming_digest text)
  RETURNING tenant_id, receipt_id
)
SELECT r.tenant_id AS "tenantId", r.id AS "receiptId", r.connection_id AS "connectionId", r.provider
FROM conflict c JOIN receipts r ON r.id = c.receipt_id AND r.tenant_id = c.tenant_id`;
