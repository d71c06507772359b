import { CONFIG, type JobsConfig, type ProvidersConfig, type RedisConfig } from "../config/sections.js";
import { Module } from "@nestjs/common";
import type { RedisClient } from "../redis/redis.js";
import { ProviderQuota } from "../common/outbound/provider-quota.js";
import { QUEUE_CONNECTION } from "../queues/queue-lifecycle.js";
import { InboxRegistry } from "./inbox-registry.js";
import { ProviderInboxChannel } from "./inbox-channel.js";
import { RegistrationRegistry } from "./registration-registry.js";
import { PLUGIN_CLIENTS, pluginClasses } from "./plugins.js";

/**
 * The worker's side of the providers: their API clients, paced by budgets shared in Redis (on the
 * worker's connection), lead and reply rules, and webhook registrars, by provider.
 */
@Module({
  providers: [
    {
      provide: ProviderQuota,
      inject: [QUEUE_CONNECTION, CONFIG.redis, CONFIG.providers, CONFIG.jobs],
      useFactory: (
        redis: RedisClient,
        { redisPrefix }: RedisConfig,
        providers: ProvidersConfig,
        jobs: JobsConfig,
      ) => new ProviderQuota(redis, redisPrefix, providers.providerRateLimits, jobs.sideEffectTimeoutMs),
    },
    ...PLUGIN_CLIENTS,
    ...pluginClasses("inbox"),
    InboxRegistry,
    ProviderInboxChannel,
    ...pluginClasses("registrar"),
    RegistrationRegistry,
  ],
  // The registrars also serve the proof that a grant reaches an account (src/connections/account-access.ts).
  exports: [InboxRegistry, ProviderInboxChannel, RegistrationRegistry, ...PLUGIN_CLIENTS],
})
export class ProviderApisModule {}
