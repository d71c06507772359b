import { Injectable } from "@nestjs/common";
import { byProvider } from "./by-provider.js";
import type { Provider } from "./provider-event.js";
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
    this.adapters = byProvider<ProviderAdapter>({ staticforms: staticForms, thumbtack, yelp }, "adapter");
  }

  get(provider: Provider): ProviderAdapter {
    return this.adapters[provider];
  }
}
