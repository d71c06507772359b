import { Module } from "@nestjs/common";
import { AuthModule } from "../auth/auth.module.js";
import { AdminDatabaseModule } from "../database/database.module.js";
import { ConnectionsModule } from "../connections/connections.module.js";
import { OutboundModule } from "../common/outbound/outbound.module.js";
import { JobsModule } from "../jobs/jobs.module.js";
import { AlertBook } from "../alerts/alert-book.js";
import { NotificationChannels } from "../alerts/notification-channels.repository.js";
import { NotificationOutbox } from "../alerts/notifications/notification-outbox.js";
import { NotificationsModule } from "../alerts/notifications/notifications.module.js";
import { AlertsAdminService, AlertsController } from "./alerts.js";
import { ApiKeysController } from "./api-keys.js";
import { ChannelConfirmations } from "../alerts/channel-confirmations.js";
import { ChannelConfirmationController } from "./notification-channel-confirmation.js";
import { ChannelActionLimits } from "./notification-channel-limits.js";
import { NotificationChannelsController } from "./notification-channels.js";
import { NotificationChannelsAdminService } from "./notification-channels.service.js";
import { BackfillCounter } from "./backfill-count.js";
import { BackfillsService } from "./backfills.js";
import { BackfillsController } from "./backfills.controller.js";
import { ReconciliationModule } from "../reconciliation/reconciliation.module.js";
import { AuditController, AuditRepository } from "./audit.js";
import { ConflictsController, ConflictsRepository } from "./conflicts.js";
import { ConnectionSync } from "./connections/connection-sync.js";
import { ConnectionsAdminService } from "./connections/connections-admin.service.js";
import { SyncRuns } from "./connections/sync-runs.js";
import { ConnectionsController } from "./connections/connections.controller.js";
import { ReplyPreviews } from "./connections/reply-preview.js";
import { JobsAdminRepository, JobsController } from "./jobs.js";
import { JobsSummaryController, JobsSummaryRepository } from "./jobs-summary.js";
import { OverviewController, OverviewRepository } from "./overview.js";
import { LeadMarkReplied } from "./lead-mark-replied.js";
import { ListReads } from "./list-reads.js";
import { LeadsAdminRepository, LeadsController } from "./leads.js";
import { SpeedToLeadController, SpeedToLeadService } from "./speed-to-lead.js";
import { SpeedToLeadRepository } from "./speed-to-lead.repository.js";
import { FirstResponses } from "../leads/first-responses.js";
import { ReceiptsController, ReceiptsRepository } from "./receipts.js";
import { TenantsController, TenantsRepository } from "./tenants.js";
import { UserInvitationMail } from "./user-invitation-mail.js";
import { UsersController } from "./users.js";

/** The admin API (api.md "Admin API"): every route needs an API key; tenant-admin keys see their tenant only. */
@Module({
  // Admin repositories run on the admin pool (AdminDatabaseModule), apart from ingest's.
  imports: [
    AdminDatabaseModule,
    AuthModule,
    ConnectionsModule,
    JobsModule,
    OutboundModule,
    NotificationsModule,
    ReconciliationModule,
  ],
  controllers: [
    TenantsController,
    ApiKeysController,
    ConnectionsController,
    ReceiptsController,
    JobsSummaryController,
    JobsController,
    LeadsController,
    OverviewController,
    SpeedToLeadController,
    ConflictsController,
    AuditController,
    AlertsController,
    NotificationChannelsController,
    // No API key: the confirmation link's token authenticates.
    ChannelConfirmationController,
    BackfillsController,
    UsersController,
  ],
  providers: [
    UserInvitationMail,
    AuditRepository,
    TenantsRepository,
    ConnectionsAdminService,
    ReplyPreviews,
    ConnectionSync,
    SyncRuns,
    ReceiptsRepository,
    JobsAdminRepository,
    JobsSummaryRepository,
    OverviewRepository,
    LeadsAdminRepository,
    ListReads,
    SpeedToLeadRepository,
    SpeedToLeadService,
    FirstResponses,
    LeadMarkReplied,
    ConflictsRepository,
    // The alert stores on the admin pool (not AlertsModule's, which ingest and the worker use).
    AlertBook,
    NotificationOutbox,
    NotificationChannels,
    AlertsAdminService,
    NotificationChannelsAdminService,
    ChannelConfirmations,
    ChannelActionLimits,
    BackfillCounter,
    BackfillsService,
  ],
  // Replay's admin routes (src/replay/) audit and answer with job views; the OAuth routes
  // (src/oauth/) audit and create connections in a tenant.
  exports: [AuthModule, AuditRepository, JobsAdminRepository, TenantsRepository, ReconciliationModule],
})
export class AdminModule {}
