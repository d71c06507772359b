import { Module } from "@nestjs/common";
import { AuditModule } from "../audit/audit.module.js";
import { ClientsRepository } from "./clients.repository.js";

/** The client store (on the main pool, or the caller's transaction): connections are placed in clients through it. */
@Module({
  imports: [AuditModule],
  providers: [ClientsRepository],
  exports: [ClientsRepository],
})
export class ClientsModule {}
