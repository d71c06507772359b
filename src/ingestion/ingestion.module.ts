import { Module } from "@nestjs/common";
import { AuthModule } from "../auth/auth.module.js";
import { ConnectionsModule } from "../connections/connections.module.js";
import { JobsModule } from "../jobs/jobs.module.js";
import { ProvidersModule } from "../providers/providers.module.js";
import { IngestionService } from "./ingestion.service.js";
import { RateLimiter } from "./rate-limiter.js";
import { ReceiptStoreModule } from "./receipt-store.module.js";

/** Ingestion's services; its routes are plain Fastify routes (webhook-routes.ts, mounted by src/http.ts). */
@Module({
  imports: [AuthModule, ConnectionsModule, ProvidersModule, JobsModule, ReceiptStoreModule],
  providers: [IngestionService, RateLimiter],
})
export class IngestionModule {}
