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
import { ChannelConfirmationController } from "../alerts/channel-confirmation.controller.js";
import { ChannelActionLimits } from "../alerts/notification-channel-limits.js";
import { NotificationChannelsController } from "./notification-channels.js";
import { NotificationChannelsAdminService } from "../alerts/notification-channels.service.js";
import { BackfillCounter } from "../reconciliation/backfill-count.js";
import { BackfillsService } from "../reconciliation/backfills.js";
import { BackfillsController } from "./backfills.controller.js";
import { ReconciliationModule } from "../reconciliation/reconciliation.module.js";
import { AuditController } from "./audit.js";
import { ConflictsRepository } from "../ingestion/payload-conflicts.js";
import { ConflictsController } from "./conflicts.js";
import { ConnectionSync } from "./connections/connection-sync.js";
import { ConnectionsAdminService } from "./connections/connections-admin.service.js";
import { ConnectionsController } from "./connections/connections.controller.js";
import { ReplyPreviews } from "./connections/reply-preview.js";
import { JobsAdminRepository } from "../jobs/job-reads.js";
import { JobsController } from "./jobs.js";
import { JobsSummaryRepository } from "../jobs/job-summary-reads.js";
import { JobsSummaryController } from "./jobs-summary.js";
import { OverviewRepository } from "../tenants/tenant-overview.js";
import { OverviewController } from "./overview.js";
import { LeadMarkReplied } from "./lead-mark-replied.js";
import { ListReadsModule } from "../auth/list-reads.module.js";
import { LeadsAdminRepository } from "../leads/lead-reads.js";
import { LeadsController } from "./leads.js";
import { SpeedToLeadController, SpeedToLeadService } from "./speed-to-lead.js";
import { SpeedToLeadRepository } from "../leads/speed-to-lead.repository.js";
import { FirstResponses } from "../leads/first-responses.js";
import { ReceiptsRepository } from "../ingestion/receipt-reads.js";
import { ReceiptsController } from "./receipts.js";
import { TenantsModule } from "../tenants/tenants.module.js";
import { TenantsController } from "./tenants.js";
import { ClientsController } from "./clients.js";
import { ClientsModule } from "../clients/clients.module.js";
import { InvitationLimits } from "../users/invitation-limits.js";
import { UserInvitationMail } from "../users/user-invitation-mail.js";
import { UsersController } from "./users.js";
import { ProvidersController } from "./providers.js";

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
    TenantsModule,
    ClientsModule,
    ListReadsModule,
  ],
  controllers: [
    TenantsController,
    ClientsController,
    ApiKeysController,
    ProvidersController,
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
    InvitationLimits,
    ConnectionsAdminService,
    ReplyPreviews,
    ConnectionSync,
    ReceiptsRepository,
    JobsAdminRepository,
    JobsSummaryRepository,
    OverviewRepository,
    LeadsAdminRepository,
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
  // The console (src/console-static.ts) and the root modules take the guard and sessions from here.
  exports: [AuthModule],
})
export class AdminModule {}
