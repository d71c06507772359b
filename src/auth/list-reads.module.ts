import { Module } from "@nestjs/common";
import { AdminDatabaseModule } from "../database/database.module.js";
import { AuthModule } from "./auth.module.js";
import { ListReads } from "./list-reads.js";

/** Where admin lists and reports read (the replica or the primary), one per process (it owns a gauge). */
@Module({
  imports: [AdminDatabaseModule, AuthModule],
  providers: [ListReads],
  exports: [ListReads],
})
export class ListReadsModule {}
