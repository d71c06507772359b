import { Module } from "@nestjs/common";
import { AuditModule } from "../audit/audit.module.js";
import { AuthModule } from "../auth/auth.module.js";
import { AdminDatabaseModule } from "../database/database.module.js";
import { TenantsRepository } from "./tenants.repository.js";

/** The tenant store, on the admin pool: the admin API, OAuth and replay act in a tenant through it. */
@Module({
  imports: [AdminDatabaseModule, AuditModule, AuthModule],
  providers: [TenantsRepository],
  exports: [TenantsRepository, AuditModule],
})
export class TenantsModule {}
