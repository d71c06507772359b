import { Injectable } from "@nestjs/common";
import { ModuleRef } from "@nestjs/core";
import type { Provider } from "./provider-event.js";
import type { ProviderInbox } from "./provider-inbox.js";
import { PLUGINS } from "./plugins.js";

/** Every provider's lead and reply rules, for the worker's processors, as its plugin names them. */
@Injectable()
export class InboxRegistry {
  /** Resolved once each: ingest asks for every delivery. */
  private readonly resolved = new Map<Provider, ProviderInbox>();

  constructor(private readonly modules: ModuleRef) {}

  get(provider: Provider): ProviderInbox {
    const found = this.resolved.get(provider);
    if (found) return found;
    const resolved: ProviderInbox = this.modules.get(PLUGINS[provider].inbox, { strict: false });
    this.resolved.set(provider, resolved);
    return resolved;
  }
}
