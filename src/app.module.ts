import { type DynamicModule, Module } from "@nestjs/common";
import { AdminModule } from "./admin/admin.module.js";
import { AlertPortsModule } from "./alerts/alerts.module.js";
import { JobGauges } from "./jobs/job-gauges.js";
import { ReplayApiModule } from "./replay/replay-api.module.js";
import type { AppConfig } from "./config/config.js";
import { ConfigModule } from "./config/config.module.js";
import { CryptoModule } from "./crypto/crypto.module.js";
import { DatabaseModule } from "./database/database.module.js";
import { IngestionModule } from "./ingestion/ingestion.module.js";
import { OAuthModule } from "./oauth/oauth.module.js";
import { ObservabilityModule } from "./observability/observability.module.js";
import { QueuesModule } from "./queues/queues.module.js";
import { RedisModule } from "./redis/redis.module.js";

/** The API process: webhooks, admin API, health. */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule,
        RedisModule,
        // After Redis: the queues close before the client they share with it (see QueuesModule).
        QueuesModule.forApi(),
        CryptoModule,
        ObservabilityModule,
        // What job.dead is to the job state machine (the API's replays and backfills use it).
        AlertPortsModule,
        IngestionModule,
        AdminModule,
        OAuthModule,
        ReplayApiModule,
      ],
      // Queue gauges read Postgres at each scrape: in the API only, so worker replicas do not multiply them.
      providers: [JobGauges],
    };
  }
}
