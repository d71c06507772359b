import { Injectable } from "@nestjs/common";
import { type Provider, PROVIDERS } from "./provider-event.js";
import type { ProviderAdapter } from "./provider-adapter.js";
import { StaticFormsAdapter } from "./static-forms/static-forms.adapter.js";
import { ThumbtackAdapter } from "./thumbtack/thumbtack.adapter.js";
import { YelpAdapter } from "./yelp/yelp.adapter.js";

/** Every provider's adapter. A provider without one does not compile, and fails the boot check. */
@Injectable()
export class AdapterRegistry {
  private readonly adapters: Record<Provider, ProviderAdapter>;

  constructor(
    staticForms: StaticFormsAdapter,
    thumbtack: ThumbtackAdapter,
    readonly yelp: YelpAdapter,
  ) {
    this.adapters = { staticforms: staticForms, thumbtack, yelp };
    const missing = PROVIDERS.filter((provider) => this.adapters[provider]?.provider !== provider);
    if (missing.length > 0) throw new Error(`no adapter registered for provider(s): ${missing.join(", ")}`);
  }

  get(provider: Provider): ProviderAdapter {
    return this.adapters[provider];
  }
}
