import { Injectable } from "@nestjs/common";
import { ModuleRef } from "@nestjs/core";
import type { Provider } from "./provider-event.js";
import type { ProviderFollowUp } from "./provider-follow-up.js";
import { PLUGINS } from "./plugins.js";

/** Every provider's lead and reply rules, for the worker's processors, as its plugin names them. */
@Injectable()
export class FollowUpRegistry {
  constructor(private readonly modules: ModuleRef) {}

  get(provider: Provider): ProviderFollowUp {
    return this.modules.get(PLUGINS[provider].followUp, { strict: false });
  }
}
