import { AuthModule } from "../auth/auth.module.js";
import { Module } from "@nestjs/common";
import { OutboundModule } from "../common/outbound/outbound.module.js";
import { ConnectionsModule } from "../connections/connections.module.js";
import { JobsModule } from "../jobs/jobs.module.js";
import { TenantsModule } from "../tenants/tenants.module.js";
import { ClientsModule } from "../clients/clients.module.js";
import { OAuthAdminController } from "./oauth-admin.controller.js";
import { OAuthAttemptsRepository } from "./oauth-attempts.repository.js";
import { OAuthCallbackController } from "./oauth-callback.controller.js";
import { OAuthService } from "./oauth.service.js";
import { OAuthStates } from "./oauth-states.js";

/** Connecting Yelp and Thumbtack accounts with OAuth (api.md "Connecting provider accounts"). */
@Module({
  imports: [TenantsModule, ClientsModule, AuthModule, ConnectionsModule, JobsModule, OutboundModule],
  controllers: [OAuthAdminController, OAuthCallbackController],
  providers: [OAuthService, OAuthAttemptsRepository, OAuthStates],
})
export class OAuthModule {}
