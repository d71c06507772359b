import { type DynamicModule, Module } from "@nestjs/common";
import type { AppConfig } from "./config/config.js";
import { AlertPortsModule } from "./alerts/alerts.module.js";
import { AlertsWorkerModule } from "./alerts/alerts-worker.module.js";
import { YoungTables } from "./common/young-tables.js";
import { ConfigModule } from "./config/config.module.js";
import { ConnectionsWorkerModule } from "./connections/connections.module.js";
import { CryptoModule } from "./crypto/crypto.module.js";
import { DatabaseModule } from "./database/database.module.js";
import { WorkerJobsModule } from "./jobs/worker-jobs.module.js";
import { ObservabilityModule } from "./observability/observability.module.js";
import { QueuesModule } from "./queues/queues.module.js";
import { ReconciliationWorkerModule } from "./reconciliation/reconciliation.module.js";
import { RedisModule } from "./redis/redis.module.js";
import { ReplayWorkerModule } from "./replay/replay-worker.module.js";
import { RetentionModule } from "./retention/retention.module.js";

/** The worker process: BullMQ processors, dispatcher, bulk replays, scheduled retention, reconciliation and the silence sweep. No HTTP port. */
@Module({})
export class WorkerModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule,
        RedisModule,
        // After the database: the workers finish their jobs before the pool closes (see QueuesModule).
        QueuesModule.forWorker(),
        CryptoModule,
        ObservabilityModule,
        // What job.dead and destination.failing are to the job state machine and the circuit breaker.
        AlertPortsModule,
        // The processors of the layers above (provider sync and the credentials of provider calls,
        // reconciliation writes receipts, notifications read alerts) join the jobs layer's workers here.
        WorkerJobsModule.forRoot([ConnectionsWorkerModule, ReconciliationWorkerModule, AlertsWorkerModule]),
        ReplayWorkerModule,
        RetentionModule,
      ],
      // Statistics for a new database's tables before autovacuum's first pass (src/common/young-tables.ts).
      providers: [YoungTables],
    };
  }
}
