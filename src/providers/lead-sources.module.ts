import { Injectable, Module } from "@nestjs/common";
import { byProvider } from "./by-provider.js";
import { FollowUpModule } from "./follow-up.module.js";
import { type LeadSource, NoLeadSource } from "./lead-source.js";
import type { Provider } from "./provider-event.js";
import { ProvidersModule } from "./providers.module.js";
import { ThumbtackLeadSource } from "./thumbtack/thumbtack.lead-source.js";
import { YelpLeadSource } from "./yelp/yelp.lead-source.js";

/** Every provider's lead source (Static Forms: none, so manual). A provider without one does not compile. */
@Injectable()
export class LeadSources {
  private readonly sources: Record<Provider, LeadSource>;

  constructor(yelp: YelpLeadSource, thumbtack: ThumbtackLeadSource) {
    this.sources = byProvider<LeadSource>(
      { staticforms: new NoLeadSource(), thumbtack, yelp },
      "lead source",
    );
  }

  get(provider: Provider): LeadSource {
    return this.sources[provider];
  }
}

/** Lead sources of reconciliation and backfill: the providers' API clients and their adapters. */
@Module({
  imports: [ProvidersModule, FollowUpModule],
  providers: [YelpLeadSource, ThumbtackLeadSource, LeadSources],
  exports: [LeadSources],
})
export class LeadSourcesModule {}
