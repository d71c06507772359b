// The tables that only grow, partitioned by month (migration 20261212000000_partitioned_history;
// docs/operations.md "Partitioned history"), and how retention forgets each: as data, one row per
// table. Retention drops a month once all of it is older than the table's window; the rows of that
// month something still needs are moved to the DEFAULT partition first (survivors), and the DEFAULT
// partition's own rows are purged row by row (they are few: survivors and stray months).
import type { RetentionConfig } from "../config/sections.js";
import { JOB_STATUSES } from "../jobs/state/job-states.js";

/** A list of job statuses as SQL (`('a', 'b')`), for `status IN …`. */
export const sqlList = (statuses: readonly string[]) =>
  `(${statuses.map((status) => `'${status}'`).join(", ")})`;
/** A payload is kept while any job of its receipt has not succeeded: dead and cancelled jobs may be replayed. */
export const NOT_SUCCEEDED = sqlList(JOB_STATUSES.filter((status) => status !== "succeeded"));

export type PartitionedTable = "receipt_payloads" | "job_attempts" | "lead_messages" | "audit_entries";

export interface PartitionRetention {
  /** The partition key (a timestamp that never changes for a row). */
  key: string;
  /** The window in days: a month whose end is older than now minus this is dropped. */
  days: (config: RetentionConfig) => number;
  /**
   * Which rows of `d` (the detached month, or the DEFAULT partition) must outlive their month; `$1` is
   * the window's cutoff (a timestamptz). A drop checks every row of its month (while it holds the
   * parent's lock), each against jobs or leads by their indexes: keep it a semi-join on an indexed key.
   */
  survives: (d: string) => string;
}

export const PARTITIONED: Record<PartitionedTable, PartitionRetention> = {
  // A payload outlives its month while its receipt has a job that has not succeeded (a replay needs it).
  receipt_payloads: {
    key: "received_at",
    days: (config) => config.payloadRetentionDays,
    survives: (d) =>
      `EXISTS (SELECT 1 FROM jobs j WHERE j.receipt_id = ${d}.receipt_id AND j.tenant_id = ${d}.tenant_id
                 AND j.status IN ${NOT_SUCCEEDED})`,
  },
  // Attempts go with their jobs (deleted with their receipts after RECEIPT_RETENTION_DAYS; a job
  // without a receipt that long after it finished): an attempt outlives its month while its job exists.
  job_attempts: {
    key: "job_created_at",
    days: (config) => config.receiptRetentionDays,
    survives: (d) =>
      `EXISTS (SELECT 1 FROM jobs j WHERE j.id = ${d}.job_id AND j.tenant_id = ${d}.tenant_id)`,
  },
  // A lead's messages (the partition key is the lead's created_at) outlive their month while the
  // lead had an event inside MESSAGE_RETENTION_DAYS: a conversation in progress keeps its history.
  lead_messages: {
    key: "lead_created_at",
    days: (config) => config.messageRetentionDays,
    survives: (d) =>
      `EXISTS (SELECT 1 FROM leads l WHERE l.id = ${d}.lead_id AND l.tenant_id = ${d}.tenant_id
                 AND l.last_event_at >= $1)`,
  },
  // Nothing outlives its audit month.
  audit_entries: {
    key: "created_at",
    days: (config) => config.auditRetentionDays,
    survives: () => "false",
  },
};

export const PARTITIONED_TABLES = Object.keys(PARTITIONED) as PartitionedTable[];

/** Month partitions kept ready ahead: the current month and the next two. */
export const MONTHS_AHEAD = 2;
