import { CONFIG, type DatabaseConfig } from "../config/sections.js";
import { Inject, Injectable, type OnModuleDestroy } from "@nestjs/common";
import { type PoolSettings, PrismaService } from "./prisma.service.js";

/** The replica's pool in each API process: admin lists and reports only, so as few as the admin pool. */
const REPLICA_POOL: PoolSettings = { max: 4 };

/**
 * The optional read replica (DATABASE_REPLICA_URL): a PrismaService over a pool of its own to the
 * streaming replica, or undefined without the variable (then no pool is opened and every read goes
 * to the primary as before). Only admin lists and reports read it, through src/auth/list-reads.ts:
 * nothing that decides a write, no detail view, no session or key lookup.
 */
@Injectable()
export class ReadReplica implements OnModuleDestroy {
  readonly client: PrismaService | undefined;

  constructor(@Inject(CONFIG.database) config: DatabaseConfig) {
    const url = config.databaseReplicaUrl;
    this.client =
      url === undefined
        ? undefined
        : new PrismaService({ databaseUrl: url, databaseReplicaUrl: undefined }, REPLICA_POOL);
  }

  async onModuleDestroy(): Promise<void> {
    await this.client?.onModuleDestroy();
  }
}
