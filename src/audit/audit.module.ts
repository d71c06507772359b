import { Module } from "@nestjs/common";
import { AdminDatabaseModule } from "../database/database.module.js";
import { AuditRepository } from "./audit.repository.js";

/** The audit log's store, on the admin pool (its writes join the caller's transaction). */
@Module({
  imports: [AdminDatabaseModule],
  providers: [AuditRepository],
  exports: [AuditRepository],
})
export class AuditModule {}
