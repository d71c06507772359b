// The outbox of jobs created inside a transaction of the layers above (an alert's notifications,
// and ingest's jobs: the receipt statement of src/ingestion/receipt-writer.ts NOTIFYs their ids too):
// the jobs are rows of that transaction, and the same transaction tells the workers' dispatchers
// about them with NOTIFY, which Postgres delivers at its commit and never after a rollback. A
// dispatcher that hears of them runs them at once, or hands them to BullMQ (Dispatcher, OutboxListener); its
// poll remains the safety net for a notification missed (no dispatcher listening, a lost connection).
import { Injectable } from "@nestjs/common";
import { PrismaService } from "../database/prisma.service.js";
import type { Tx } from "../database/transactions.js";
import type { EnqueueableJob } from "./job-queue.js";
import { create } from "./state/job-statements.js";
import type { NewJob } from "./state/job-state-types.js";

/** The NOTIFY channel: each payload is the ids of jobs just committed, comma-separated. */
export const JOB_OUTBOX_CHANNEL = "leadgate_job_outbox";

/** Ids per NOTIFY payload (Postgres takes up to 8,000 bytes; an id is 36 and its comma). */
const IDS_PER_PAYLOAD = 200;

/**
 * SQL that NOTIFYs the ids `source` selects (a column `id`) on the outbox channel, IDS_PER_PAYLOAD
 * a payload, delivered when the transaction commits (none for no ids). One home for the payload's
 * shape: JobOutbox.add and the receipt statement (src/ingestion/receipt-writer.ts) both use it.
 */
export function outboxNotifySql(source: string): string {
  return `SELECT pg_notify('${JOB_OUTBOX_CHANNEL}', string_agg(id::text, ','))
  FROM (SELECT id, (row_number() OVER () - 1) / ${IDS_PER_PAYLOAD} AS chunk FROM (${source}) AS ids) AS numbered
  GROUP BY chunk`;
}

/** The ids a payload names (anything that is not one is ignored). */
export function outboxIds(payload: string | undefined): string[] {
  return (payload ?? "").split(",").filter((id) => /^[0-9a-f-]{36}$/.test(id));
}

@Injectable()
export class JobOutbox {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Creates `jobs` in `tx`, as JobStateMachine.create does (`queued`, with their operation's attempts
   * from OPERATION_SETTINGS; a key that exists already creates nothing); the dispatchers hear of the
   * ones created when `tx` commits.
   */
  async add(tx: Tx, jobs: readonly NewJob[]): Promise<EnqueueableJob[]> {
    if (jobs.length === 0) return [];
    const created = await create(this.prisma, [...jobs], tx);
    if (created.length === 0) return created;
    await tx.$executeRawUnsafe(
      outboxNotifySql("SELECT unnest($1::uuid[]) AS id"),
      created.map((job) => job.id),
    );
    return created;
  }

  /** Of the jobs `ids`, those still queued: what a dispatcher that heard of them runs or enqueues. */
  async queued(ids: readonly string[]): Promise<EnqueueableJob[]> {
    const { rows } = await this.prisma.pool.query<EnqueueableJob>(
      `SELECT id, job_key AS "jobKey", operation FROM jobs WHERE id = ANY($1::uuid[]) AND status = 'queued'`,
      [ids],
    );
    return rows;
  }
}
