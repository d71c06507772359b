import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from "@nestjs/common";
import { PrismaService } from "../database/prisma.service.js";
import { Periodic } from "./periodic.js";

/** A table with this many rows written and no statistics yet is analyzed (autovacuum's own threshold). */
const YOUNG_ROWS = 50;
const CHECK_MS = 1_000;

/**
 * Statistics for young tables. Postgres plans a statement from its tables' statistics, which
 * autovacuum first gathers a minute or more after a table starts filling (it looks once per
 * `autovacuum_naptime`). Until then the planner cannot tell apart two indexes that begin with the
 * same column, and picks either. SqlBatch keeps a statement's generic plan for thousands of runs
 * (src/common/sql-batch.ts): on a new database the CRM delivery's read of its lead was planned on
 * `leads_speed_to_lead_idx` (tenant_id, ...) instead of the unique (tenant_id, provider,
 * external_lead_id), so each read scanned every lead of its tenant, and a receipt was found among
 * its tenant's receipts instead of by its primary key; both grew with the tables until the first
 * ANALYZE. So the worker analyzes, once, each table (a new month's partition as well) that has had
 * YOUNG_ROWS rows written and was never analyzed; an ANALYZE makes every session plan its
 * statements on that table again. Autovacuum keeps the statistics from then on. SKIP_LOCKED: a
 * table another worker is analyzing is left to it.
 */
@Injectable()
export class YoungTables implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger("statistics");
  private readonly ticks = new Periodic(() =>
    this.analyze().catch((error: unknown) =>
      this.logger.warn({ msg: "analyzing young tables failed", error: String(error) }),
    ),
  );

  constructor(private readonly prisma: PrismaService) {}

  onApplicationBootstrap(): void {
    this.ticks.start(CHECK_MS);
  }

  async onModuleDestroy(): Promise<void> {
    await this.ticks.stop();
  }

  /** Analyzes the young tables of the database now; answers their names. */
  async analyze(): Promise<string[]> {
    const { rows } = await this.prisma.pool.query<{ name: string }>(
      `SELECT format('%I.%I', schemaname, relname) AS name FROM pg_stat_user_tables
         WHERE last_analyze IS NULL AND last_autoanalyze IS NULL AND n_mod_since_analyze >= $1
         ORDER BY 1`,
      [YOUNG_ROWS],
    );
    const names = rows.map((row) => row.name);
    if (names.length === 0) return names;
    await this.prisma.pool.query(`ANALYZE (SKIP_LOCKED) ${names.join(", ")}`);
    this.logger.log({ msg: "analyzed young tables", tables: names });
    return names;
  }
}
