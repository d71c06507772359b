import { CONFIG, type DatabaseConfig } from "../config/sections.js";
import { Inject, Injectable, Logger, type OnModuleDestroy, Optional } from "@nestjs/common";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { PrismaClient } from "../generated/prisma/client.js";

const logger = new Logger("database");

/** A PrismaService's pool: how many Postgres connections it opens. */
export interface PoolSettings {
  max: number;
}

/** Injection token of the pool settings (absent: the process's main pool). */
export const POOL_SETTINGS = Symbol("POOL_SETTINGS");

/** Postgres connections per process; the ingest path batches, so a few go far. */
const MAIN_POOL: PoolSettings = { max: 10 };

/**
 * The admin API's own pool (src/database/database.module.ts AdminDatabaseModule): slow or many admin
 * queries wait for these connections and never take the ones ingest and the jobs need.
 */
export const ADMIN_POOL: PoolSettings = { max: 4 };

type Adapter = Awaited<ReturnType<PrismaPg["connect"]>>;
type AdapterTransaction = Awaited<ReturnType<Adapter["startTransaction"]>>;

/**
 * PrismaPg whose transactions always give their connection back. Prisma 6.19 runs `createMany`,
 * `updateMany` and interactive transactions as BEGIN … COMMIT on a checked-out connection and
 * releases it only after its COMMIT or ROLLBACK succeeded: when the connection died in between (a
 * Postgres restart, a terminated backend, a query timeout), that statement fails too and the
 * connection is never released. Ten of those and the pool answers nothing again (a worker never
 * recovered from a Postgres restart). Here a failed COMMIT/ROLLBACK destroys the connection (its
 * state is unknown; closing it rolls back whatever it held), and a failed ROLLBACK then counts as
 * done: Prisma sends one from a timer on transaction timeout and never catches its failure.
 * Raw `COMMIT`/`ROLLBACK` statements must not be run inside a transaction: they would be taken
 * for Prisma's own.
 */
class PrismaPgReleasingTransactions extends PrismaPg {
  override async connect(): Promise<Adapter> {
    const adapter = await super.connect();
    const start = adapter.startTransaction.bind(adapter);
    adapter.startTransaction = async (isolationLevel) => releasedOnFailedEnd(await start(isolationLevel));
    return adapter;
  }
}

/** What adapter-pg's transaction holds (not in its types): the checked-out client and its listener cleanup. */
interface PgTransactionInternals {
  client: pg.PoolClient;
  cleanup?: () => void;
}

function releasedOnFailedEnd(tx: AdapterTransaction): AdapterTransaction {
  const [commit, rollback, executeRaw] = [tx.commit.bind(tx), tx.rollback.bind(tx), tx.executeRaw.bind(tx)];
  const internals = tx as unknown as PgTransactionInternals;
  let released = false;
  const releaseOnce = async (end: () => Promise<void>) => {
    if (released) return;
    released = true;
    await end();
  };
  const destroy = (error: Error) =>
    releaseOnce(() => {
      internals.cleanup?.();
      internals.client.release(error);
      return Promise.resolve();
    });
  return Object.assign(tx, {
    commit: () => releaseOnce(commit),
    rollback: () => releaseOnce(rollback),
    executeRaw: async (query: Parameters<AdapterTransaction["executeRaw"]>[0]) => {
      try {
        return await executeRaw(query);
      } catch (error) {
        if (query.sql !== "COMMIT" && query.sql !== "ROLLBACK") throw error;
        await destroy(error instanceof Error ? error : new Error(String(error)));
        if (query.sql === "COMMIT") throw error;
        return 0; // rolled back: the server ends the transaction of a closed connection
      }
    },
  });
}

/**
 * The Prisma client over one node-postgres pool (driver adapter, no native engine). The same pool
 * is exposed as `pool` for the few hot-path statements that are written in SQL and run without
 * Prisma's per-query overhead (ingest: connection lookup, receipt+jobs write). Connection and
 * statement timeouts are bounded so a database outage answers 503 quickly instead of hanging.
 */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  readonly pool: pg.Pool;

  constructor(
    @Inject(CONFIG.database) config: DatabaseConfig,
    @Optional() @Inject(POOL_SETTINGS) settings: PoolSettings = MAIN_POOL,
  ) {
    const pool = new pg.Pool({
      connectionString: config.databaseUrl,
      max: settings.max,
      connectionTimeoutMillis: 2_000,
      statement_timeout: 10_000,
      // Client side too: a half-open connection must not hold a batch (and every delivery behind it) forever.
      query_timeout: 15_000,
      keepAlive: true,
    });
    super({ adapter: new PrismaPgReleasingTransactions(pool) });
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
