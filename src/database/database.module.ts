import { Global, Module } from "@nestjs/common";
import { ADMIN_POOL, POOL_SETTINGS, PrismaService } from "./prisma.service.js";
import { ReadReplica } from "./read-replica.js";
import { Transactions } from "./transactions.js";

@Global()
@Module({ providers: [PrismaService, Transactions], exports: [PrismaService, Transactions] })
export class DatabaseModule {}

/**
 * The admin API's database access over its own small pool (ADMIN_POOL): a module that imports this
 * gets this PrismaService and Transactions instead of the global ones, so admin queries cannot
 * starve ingest of connections. (Stores and the job state machine that admin routes call keep the
 * main pool, except inside an admin transaction, which they join.) With DATABASE_REPLICA_URL, its
 * ReadReplica is the pool that admin lists and reports read (src/auth/list-reads.ts).
 */
@Module({
  providers: [{ provide: POOL_SETTINGS, useValue: ADMIN_POOL }, PrismaService, Transactions, ReadReplica],
  exports: [PrismaService, Transactions, ReadReplica],
})
export class AdminDatabaseModule {}
