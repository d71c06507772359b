import { Injectable, Module } from "@nestjs/common";
import { ModuleRef } from "@nestjs/core";
import { ProviderApisModule } from "./provider-apis.module.js";
import { type LeadSource, NoLeadSource } from "./lead-source.js";
import type { Provider } from "./provider-event.js";
import { ProvidersModule } from "./providers.module.js";
import { PLUGINS, pluginClasses } from "./plugins.js";

/** Every provider's lead source, as its plugin names it (none: nothing to reconcile, so manual). */
@Injectable()
export class LeadSources {
  private readonly none = new NoLeadSource();

  constructor(private readonly modules: ModuleRef) {}

  get(provider: Provider): LeadSource {
    const source = PLUGINS[provider].leadSource;
    return source ? this.modules.get(source, { strict: false }) : this.none;
  }
}

/** Lead sources of reconciliation and backfill: the providers' API clients and their adapters. */
@Module({
  imports: [ProvidersModule, ProviderApisModule],
  providers: [...pluginClasses("leadSource"), LeadSources],
  exports: [LeadSources],
})
export class LeadSourcesModule {}
