import { CONFIG, type AuthConfig } from "../config/sections.js";
import { Inject, Logger, Module, type OnApplicationBootstrap, type OnModuleDestroy } from "@nestjs/common";
import { AdminRateLimit } from "./admin-rate-limit.js";
import { ApiKeyGuard } from "./api-key.guard.js";
import { ApiKeysRepository } from "./api-keys.repository.js";
import { PreauthBudget } from "./preauth-budget.js";
import { RecentWrites, RecentWritesInterceptor } from "./recent-writes.js";
import { UsersModule } from "../users/users.module.js";

/** API keys and the guard of the admin API (keys and console sessions); ensures the bootstrap operator key at boot. */
@Module({
  imports: [UsersModule],
  providers: [
    ApiKeysRepository,
    ApiKeyGuard,
    PreauthBudget,
    AdminRateLimit,
    RecentWrites,
    RecentWritesInterceptor,
  ],
  exports: [
    ApiKeysRepository,
    ApiKeyGuard,
    PreauthBudget,
    AdminRateLimit,
    RecentWrites,
    RecentWritesInterceptor,
    UsersModule,
  ],
})
export class AuthModule implements OnApplicationBootstrap, OnModuleDestroy {
  constructor(
    private readonly keys: ApiKeysRepository,
    @Inject(CONFIG.auth) private readonly config: AuthConfig,
  ) {}

  private readonly logger = new Logger("auth");
  private retry: NodeJS.Timeout | undefined;

  async onApplicationBootstrap(): Promise<void> {
    const key = this.config.bootstrapOperatorKey;
    if (key !== undefined) await this.ensure(key);
  }

  onModuleDestroy(): void {
    clearTimeout(this.retry);
  }

  /** The API serves webhooks while the database is down, so a failed attempt is retried, not fatal. */
  private async ensure(key: string): Promise<void> {
    try {
      const { usable, revokedOlder } = await this.keys.ensureOperatorKey(key);
      if (usable) this.logger.log({ msg: "bootstrap operator key ensured", revokedOlder });
      else
        this.logger.warn({
          msg: "LEADGATE_BOOTSTRAP_OPERATOR_KEY names a revoked or a non-operator key; set a new value to get an operator key",
        });
    } catch (error) {
      this.logger.warn({
        msg: "could not ensure the bootstrap operator key; retrying in 5 s",
        error: error instanceof Error ? error.message : String(error),
      });
      this.retry = setTimeout(() => void this.ensure(key), 5_000);
    }
  }
}
