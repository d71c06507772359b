import { Module } from "@nestjs/common";
import { ConnectionsRepository } from "./connections.repository.js";
import { ConnectionsService } from "./connections.service.js";

@Module({
  providers: [ConnectionsRepository, ConnectionsService],
  exports: [ConnectionsRepository, ConnectionsService],
})
export class ConnectionsModule {}
