import { Injectable } from "@nestjs/common";
import { ModuleRef } from "@nestjs/core";
import type { Provider } from "./provider-event.js";
import type { ProviderAdapter } from "./provider-adapter.js";
import { PLUGINS } from "./plugins.js";

/** Every provider's adapter, as its plugin names it (plugins.ts). */
@Injectable()
export class AdapterRegistry {
  /** Resolved once each: ingest asks for every delivery. */
  private readonly resolved = new Map<Provider, ProviderAdapter>();

  constructor(private readonly modules: ModuleRef) {}

  get(provider: Provider): ProviderAdapter {
    const found = this.resolved.get(provider);
    if (found) return found;
    const resolved: ProviderAdapter = this.modules.get(PLUGINS[provider].adapter, { strict: false });
    this.resolved.set(provider, resolved);
    return resolved;
  }
}
