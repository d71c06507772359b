import { Module } from "@nestjs/common";
import { AuthModule } from "../auth/auth.module.js";
import { ConnectionsModule } from "../connections/connections.module.js";
import { JobsModule } from "../jobs/jobs.module.js";
import { ProvidersModule } from "../providers/providers.module.js";
import { IngestionService } from "./ingestion.service.js";
import { RateLimiter } from "./rate-limiter.js";
import { ReceiptStoreModule } from "./receipt-store.module.js";
import { WebhooksController } from "./webhooks.controller.js";

@Module({
  imports: [AuthModule, ConnectionsModule, ProvidersModule, JobsModule, ReceiptStoreModule],
  controllers: [WebhooksController],
  providers: [IngestionService, RateLimiter],
})
export class IngestionModule {}
