import { Module } from "@nestjs/common";
import { FollowUpModule } from "../providers/follow-up.module.js";
import { AccountAccessCheck } from "./account-access.js";
import { ConnectionCleanup } from "./connection-cleanup.js";
import { ConnectionsRepository } from "./connections.repository.js";
import { ConnectionsService } from "./connections.service.js";
import { ProviderOAuth } from "./provider-oauth.js";
import { ProviderTokens } from "./provider-tokens.js";
import { RegistrationRepository } from "./registration.js";

@Module({
  imports: [FollowUpModule],
  providers: [
    ConnectionsRepository,
    ConnectionsService,
    AccountAccessCheck,
    ProviderOAuth,
    ProviderTokens,
    ConnectionCleanup,
    RegistrationRepository,
  ],
  exports: [
    ConnectionsRepository,
    ConnectionsService,
    AccountAccessCheck,
    ProviderOAuth,
    ProviderTokens,
    ConnectionCleanup,
    RegistrationRepository,
  ],
})
export class ConnectionsModule {}
