// What each provider can do, as data, read from its plugin (plugins.ts): code elsewhere asks a
// capability (`capabilities(p).api`), never `provider === "…"`.
import type { InboundAuthType } from "./inbound-auth.js";
import type { ProviderCapabilities } from "./provider-capabilities.js";
import { type Provider, PROVIDERS } from "./provider-event.js";
import { PLUGINS } from "./plugins.js";

export function capabilities(provider: Provider): ProviderCapabilities {
  return PLUGINS[provider].capabilities;
}

/** Whether the provider has an API (capability `api`): its calls, sync and reconciliation exist. */
export function hasApi(provider: Provider): boolean {
  return PLUGINS[provider].capabilities.api;
}

/** The providers with an API (reconciled, synced, refreshed by the worker's sweeps). */
export const API_PROVIDERS: readonly Provider[] = PROVIDERS.filter(hasApi);

/** Whether `id` has the shape of the provider's account ids (capability `accountId`). */
export function isAccountId(provider: Provider, id: unknown): id is string {
  return typeof id === "string" && PLUGINS[provider].capabilities.accountId.pattern.test(id);
}

/** Whether Leadgate registers a connection's webhook itself, once it holds a grant. */
export function registersWebhook(provider: Provider, inboundAuth: InboundAuthType): boolean {
  return capabilities(provider).registersWebhookWith.includes(inboundAuth);
}
