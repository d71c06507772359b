import { Injectable } from "@nestjs/common";
import { inPoolTransaction } from "../database/pool-transaction.js";
import { PrismaService } from "../database/prisma.service.js";
import { MONTHS_AHEAD, PARTITIONED, type PartitionedTable } from "./partitioned-tables.js";

/** One month partition of a table: its name and its range [start, end). */
export interface MonthPartition {
  name: string;
  start: Date;
  end: Date;
}

const MONTH_NAME = /_p(\d{4})(\d{2})$/;

/** The partition DDL of retention: create months ahead, drop expired months keeping their survivors. */
@Injectable()
export class PartitionsRepository {
  constructor(private readonly prisma: PrismaService) {}

  /**
   * Creates the current month's and the next MONTHS_AHEAD months' partitions of every table that has
   * none yet (idempotent: leadgate_create_month_partition, from the migration, moves rows the DEFAULT
   * partition caught for such a month); answers how many it created.
   */
  async createAhead(table: PartitionedTable, now: Date): Promise<number> {
    const { rows } = await this.prisma.pool.query<{ created: boolean }>(
      `SELECT leadgate_create_month_partition($1, (date_trunc('month', $2::timestamptz AT TIME ZONE 'UTC')
                                                   + make_interval(months => n)) AT TIME ZONE 'UTC') AS created
       FROM generate_series(0, $3::int) AS n`,
      [table, now, MONTHS_AHEAD],
    );
    return rows.filter((row) => row.created).length;
  }

  /** The table's month partitions, oldest first (named <table>_pYYYYMM by the migration's function). */
  async months(table: PartitionedTable): Promise<MonthPartition[]> {
    const { rows } = await this.prisma.pool.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
       WHERE i.inhparent = $1::regclass ORDER BY c.relname`,
      [table],
    );
    return rows.flatMap(({ name }) => {
      const match = MONTH_NAME.exec(name);
      if (!match) return []; // the DEFAULT partition
      const [year, month] = [Number(match[1]), Number(match[2]) - 1];
      return [
        { name, start: new Date(Date.UTC(year, month, 1)), end: new Date(Date.UTC(year, month + 1, 1)) },
      ];
    });
  }

  /**
   * Drops one month: detaches it, copies the rows that must outlive it back through the parent (its
   * range is gone, so they land in the DEFAULT partition), drops it and records the drop, in ONE
   * transaction: a crash anywhere leaves the month attached and whole, and the next pass does it
   * again. The detach holds the parent's lock until commit, and the survivors' query scans the whole
   * detached month (semi-joined to jobs or leads by their indexes): its time grows with the month's
   * rows. A lock not granted within 1 s (a long query on the table) fails this table's part of the pass
   * (the others go on), and the next pass retries it
   * (writes queue behind a detach that waits for its lock, so that wait is kept short).
   * Answers the survivors.
   */
  async dropMonth(table: PartitionedTable, month: MonthPartition, cutoff: Date): Promise<number> {
    const { survives } = PARTITIONED[table];
    return inPoolTransaction(this.prisma.pool, async (client) => {
      await client.query("SET LOCAL lock_timeout = '1s'");
      await client.query(`ALTER TABLE ${table} DETACH PARTITION ${month.name}`);
      const kept = await client.query(
        `INSERT INTO ${table} SELECT d.* FROM ${month.name} d CROSS JOIN (SELECT $1::timestamptz) AS w(cutoff)
         WHERE ${survives("d")}`,
        [cutoff],
      );
      await client.query(`DROP TABLE ${month.name}`);
      await client.query(
        `INSERT INTO partition_drops (parent, range_start, range_end, survivors) VALUES ($1, $2, $3, $4)
         ON CONFLICT (parent, range_start) DO UPDATE SET dropped_at = now(), survivors = EXCLUDED.survivors`,
        [table, month.start, month.end, kept.rowCount ?? 0],
      );
      return kept.rowCount ?? 0;
    });
  }
}
