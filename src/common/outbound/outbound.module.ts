import { Module } from "@nestjs/common";
import { DestinationGuard, HostResolver } from "./destination-guard.js";

/** The check of tenant-set outbound URLs, for the admin API (when set) and the processors (when called). */
@Module({
  providers: [HostResolver, DestinationGuard],
  exports: [DestinationGuard],
})
export class OutboundModule {}
