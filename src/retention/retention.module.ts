import { Module } from "@nestjs/common";
import { PartitionsRepository } from "./partitions.repository.js";
import { RetentionRepository } from "./retention.repository.js";
import { RetentionWorker } from "./retention.worker.js";

/** Scheduled retention (worker process only). */
@Module({ providers: [RetentionRepository, PartitionsRepository, RetentionWorker] })
export class RetentionModule {}
