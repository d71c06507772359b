import { Module } from "@nestjs/common";
import { RetentionRepository } from "./retention.repository.js";
import { RetentionWorker } from "./retention.worker.js";

/** Scheduled retention (worker process only). */
@Module({ providers: [RetentionRepository, RetentionWorker] })
export class RetentionModule {}
