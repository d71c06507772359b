import { Module } from "@nestjs/common";
import { ConnectionsModule } from "../connections/connections.module.js";
import { ReceiptStoreModule } from "../ingestion/receipt-store.module.js";
import { featureProcessor } from "../jobs/operation-workers.js";
import { JobsModule } from "../jobs/jobs.module.js";
import { LeadSourcesModule } from "../providers/lead-sources.module.js";
import { LeadScan } from "./lead-scan.js";
import { MissedWebhooks } from "./missed-webhooks.js";
import { PulledIngest } from "./pulled-ingest.js";
import { ReconciliationSweep } from "./reconciliation-sweep.js";
import { ReconciliationProcessor } from "./reconciliation.processor.js";
import { ReconciliationRepository } from "./reconciliation.repository.js";
import { Reconciliation } from "./reconciliation.service.js";
import { SyncRunFollowUps } from "./sync-run-follow-ups.js";

/** What both processes use: the scan of a provider's lead list, the records, start-now. */
@Module({
  imports: [LeadSourcesModule, JobsModule, ConnectionsModule],
  providers: [LeadScan, ReconciliationRepository, Reconciliation],
  exports: [LeadScan, ReconciliationRepository, Reconciliation],
})
export class ReconciliationModule {}

/**
 * The worker's side: the `reconciliation` operation's processor (handed to WorkerJobsModule by the
 * worker entry point: featureProcessor), the periodic sweep, the start of /sync's follow-up runs,
 * and the ingest of pulled events.
 */
@Module({
  imports: [ReconciliationModule, ReceiptStoreModule, JobsModule, ConnectionsModule],
  providers: [
    PulledIngest,
    MissedWebhooks,
    ReconciliationProcessor,
    { provide: featureProcessor("reconciliation"), useExisting: ReconciliationProcessor },
    ReconciliationSweep,
    SyncRunFollowUps,
  ],
  exports: [featureProcessor("reconciliation"), ReconciliationSweep, SyncRunFollowUps],
})
export class ReconciliationWorkerModule {}
