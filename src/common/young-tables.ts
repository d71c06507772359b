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
 * (src/common/sql-batch.ts, hence this file's place beside it): on a new database the CRM
 * delivery's read of its lead was planned on `leads_speed_to_lead_idx` (tenant_id, ...) instead of
 * the unique (tenant_id, provider, external_lead_id), so each read scanned every lead of its
 * tenant, and a receipt was found among its tenant's receipts instead of by its primary key; both
 * grew with the tables until the first ANALYZE. So the worker analyzes, once, each of its schema's
 * tables (a new month's partition as well) that has had YOUNG_ROWS rows written and has never been
 * analyzed nor vacuumed (`reltuples` -1: kept in the catalog, so a crash or a statistics reset does
 * not make a grown table young again); an ANALYZE makes every session plan its statements on that
 * table again. Autovacuum keeps the statistics from then on. SKIP_LOCKED: a table another worker is
 * analyzing is left to it (and stays young here until that ends).
 */
@Injectable()
export class YoungTables implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger("statistics");
  private readonly ticks = new Periodic(() => this.tick());
  private failing = false;

  constructor(private readonly prisma: PrismaService) {}

  onApplicationBootstrap(): void {
    this.ticks.start(CHECK_MS);
  }

  async onModuleDestroy(): Promise<void> {
    await this.ticks.stop();
  }

  /** Analyzes the young tables of the database now; answers the names of those it analyzed. */
  async analyze(): Promise<string[]> {
    const { rows: young } = await this.prisma.pool.query<{ oid: string; name: string }>(
      `SELECT s.relid::text AS oid, format('%I.%I', s.schemaname, s.relname) AS name
         FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
         WHERE s.schemaname = current_schema() AND c.relpersistence = 'p' AND c.reltuples < 0
           AND s.n_mod_since_analyze >= $1 AND pg_has_role(c.relowner, 'USAGE')
         ORDER BY 2`,
      [YOUNG_ROWS],
    );
    if (young.length === 0) return [];
    await this.prisma.pool.query(`ANALYZE (SKIP_LOCKED) ${young.map((table) => table.name).join(", ")}`);
    const { rows: analyzed } = await this.prisma.pool.query<{ name: string }>(
      `SELECT format('%I.%I', n.nspname, c.relname) AS name
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE c.oid = ANY($1::oid[]) AND c.reltuples >= 0 ORDER BY 1`,
      [young.map((table) => table.oid)],
    );
    const names = analyzed.map((table) => table.name);
    if (names.length > 0) this.logger.log({ msg: "analyzed young tables", tables: names });
    return names;
  }

  /** A failure is logged once, not every second while the database is away. */
  private async tick(): Promise<void> {
    try {
      await this.analyze();
      this.failing = false;
    } catch (error) {
      if (!this.failing) {
        this.logger.warn({
          msg: "analyzing young tables failed; retrying every second",
          error: error instanceof Error ? error.message : String(error),
        });
      }
      this.failing = true;
    }
  }
}
