import { Injectable } from "@nestjs/common";
import { ModuleRef } from "@nestjs/core";
import type { Provider } from "./provider-event.js";
import type { ProviderAdapter } from "./provider-adapter.js";
import { PLUGINS } from "./plugins.js";

/** Every provider's adapter, as its plugin names it (plugins.ts). */
@Injectable()
export class AdapterRegistry {
  constructor(private readonly modules: ModuleRef) {}

  get(provider: Provider): ProviderAdapter {
    return this.modules.get(PLUGINS[provider].adapter, { strict: false });
  }
}
