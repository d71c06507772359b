import { Injectable } from "@nestjs/common";
import { API_PROVIDERS, type ApiProvider } from "../config/config.js";
import type { ProviderRegistrar } from "./provider-registration.js";
import { ThumbtackRegistrar } from "./thumbtack/thumbtack.registration.js";
import { YelpRegistrar } from "./yelp/yelp.registration.js";

/** The webhook registrar of every provider with an API (Static Forms has none: registration `manual`). */
@Injectable()
export class RegistrationRegistry {
  private readonly registrars: Record<ApiProvider, ProviderRegistrar>;

  constructor(thumbtack: ThumbtackRegistrar, yelp: YelpRegistrar) {
    this.registrars = { thumbtack, yelp };
    const missing = API_PROVIDERS.filter((provider) => this.registrars[provider]?.provider !== provider);
    if (missing.length > 0) throw new Error(`no registrar registered for provider(s): ${missing.join(", ")}`);
  }

  get(provider: ApiProvider): ProviderRegistrar {
    return this.registrars[provider];
  }
}
