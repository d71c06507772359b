import { Module } from "@nestjs/common";
import { AlertsModule } from "../alerts/alerts.module.js";
import { ClientsModule } from "../clients/clients.module.js";
import { JobsModule } from "../jobs/jobs.module.js";
import { CONNECTION_CREDENTIALS } from "../jobs/connection-credentials.js";
import { featureProcessor } from "../jobs/operation-workers.js";
import { ProviderApisModule } from "../providers/provider-apis.module.js";
import { AccountAccessCheck } from "./account-access.js";
import { ConnectionCleanup } from "./connection-cleanup.js";
import { ConnectionStore } from "./connection-store.js";
import { ConnectionSubstates } from "./connection-substates.js";
import { ConnectionsRepository } from "./connections.repository.js";
import { ConnectionsService } from "./connections.service.js";
import { JobCredentials } from "./job-credentials.js";
import { ProviderOAuth } from "./provider-oauth.js";
import { ProviderSyncJobs } from "./provider-sync.js";
import { ProviderSyncProcessor } from "./provider-sync.processor.js";
import { ProviderTokens } from "./provider-tokens.js";
import { RegistrationSweep } from "./registration-sweep.js";
import { RegistrationRepository } from "./registration.js";
import { SyncRuns } from "./sync-runs.js";
import { TokenRefreshSweep } from "./token-refresh-sweep.js";

const SHARED = [
  ConnectionStore,
  ConnectionSubstates,
  ConnectionsRepository,
  ConnectionsService,
  AccountAccessCheck,
  ProviderOAuth,
  ProviderTokens,
  ProviderSyncJobs,
  ConnectionCleanup,
  RegistrationRepository,
  SyncRuns,
];

/**
 * What both processes use: the store (the one writer of a connection), lookups, OAuth, tokens,
 * provider-sync jobs, the runs of /sync.
 */
@Module({
  imports: [ProviderApisModule, AlertsModule, JobsModule, ClientsModule],
  providers: SHARED,
  exports: [...SHARED, ClientsModule],
})
export class ConnectionsModule {}

/**
 * The worker's side: the `provider-sync` processor (handed to WorkerJobsModule by the worker entry
 * point: featureProcessor), the credentials the job runner calls providers with, and the sweeps of
 * connections (registration re-syncs, token refresh and disconnect clean-up).
 */
@Module({
  imports: [ConnectionsModule, ProviderApisModule, JobsModule],
  providers: [
    ProviderSyncProcessor,
    { provide: featureProcessor("provider-sync"), useExisting: ProviderSyncProcessor },
    JobCredentials,
    { provide: CONNECTION_CREDENTIALS, useExisting: JobCredentials },
    RegistrationSweep,
    TokenRefreshSweep,
  ],
  exports: [featureProcessor("provider-sync"), CONNECTION_CREDENTIALS, RegistrationSweep, TokenRefreshSweep],
})
export class ConnectionsWorkerModule {}
