import { Injectable } from "@nestjs/common";
import { ModuleRef } from "@nestjs/core";
import { PLUGINS } from "./plugins.js";
import type { ProviderRegistrar } from "./provider-registration.js";
import type { Provider } from "./provider-event.js";

/** The webhook registrar of every provider with an API, as its plugin names it. */
@Injectable()
export class RegistrationRegistry {
  constructor(private readonly modules: ModuleRef) {}

  get(provider: Provider): ProviderRegistrar {
    const registrar = PLUGINS[provider].registrar;
    if (!registrar) throw new Error(`${provider} has an API but its plugin names no registrar`);
    return this.modules.get(registrar, { strict: false });
  }
}
