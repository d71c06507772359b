import { Inject, Injectable, Logger, type OnModuleDestroy } from "@nestjs/common";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "../generated/prisma/client.js";
import type { AppConfig } from "../config/config.js";
import { APP_CONFIG } from "../config/config.module.js";

const logger = new Logger("database");

/** Postgres connections per process; the ingest path batches, so a few go far. */
const POOL_SIZE = 10;

/**
 * The Prisma client over one node-postgres pool (driver adapter, no native engine). The same pool
 * is exposed as `pool` for the few hot-path statements that are written in SQL and run without
 * Prisma's per-query overhead (ingest: connection lookup, receipt+jobs write). Connection and
 * statement timeouts are bounded so a database outage answers 503 quickly instead of hanging.
 */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  readonly pool: pg.Pool;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    const pool = new pg.Pool({
      connectionString: config.databaseUrl,
      max: POOL_SIZE,
      connectionTimeoutMillis: 2_000,
      statement_timeout: 10_000,
      // Client side too: a half-open connection must not hold a batch (and every delivery behind it) forever.
      query_timeout: 15_000,
      keepAlive: true,
    });
    super({ adapter: new PrismaPg(pool) });
    // An idle connection the server closed (restart, failover, DROP DATABASE) is dropped by the
    // pool; without a listener the 'error' event would crash the process.
    pool.on("error", (error) => logger.warn({ msg: "idle database connection lost", error: error.message }));
    this.pool = pool;
  }

  async onModuleDestroy(): Promise<void> {
    await this.$disconnect();
    await this.pool.end();
  }
}
