import { Module } from "@nestjs/common";
import { AlertsModule } from "../alerts/alerts.module.js";
import { JobsModule } from "../jobs/jobs.module.js";
import { ReceiptWriter } from "./receipt-writer.js";

/**
 * The receipt writer on its own: the webhooks (IngestionModule, API) and reconciliation and backfill
 * (src/reconciliation/, worker) write receipts and their jobs through the same statement (and raise
 * payload.conflict through the alert book).
 */
@Module({ imports: [JobsModule, AlertsModule], providers: [ReceiptWriter], exports: [ReceiptWriter] })
export class ReceiptStoreModule {}
