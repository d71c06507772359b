import { Inject, Injectable, type OnModuleDestroy } from "@nestjs/common";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "../generated/prisma/client.js";
import type { AppConfig } from "../config/config.js";
import { APP_CONFIG } from "../config/config.module.js";

/** Postgres pool size per process; the ingest path batches, so a few connections go far. */
const POOL_SIZE = 10;

/**
 * The Prisma client, over node-postgres through the driver adapter (no native engine). Connection
 * and statement timeouts are bounded so a database outage answers 503 quickly instead of hanging.
 */
@Injectable()
export class PrismaService extends PrismaClient implements OnModuleDestroy {
  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    super({
      adapter: new PrismaPg({
        connectionString: config.databaseUrl,
        max: POOL_SIZE,
        connectionTimeoutMillis: 2_000,
        statement_timeout: 10_000,
      }),
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.$disconnect();
  }
}
