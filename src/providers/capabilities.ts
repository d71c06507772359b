// What each provider can do, as data: the one place outside a provider's folder where the
// differences between providers are decided. Code elsewhere asks a capability (`capabilities(p).api`),
// never `provider === "…"`. Each provider folder declares its own entry; the table must cover every
// provider (a missing one does not compile, and fails the boot: byProvider).
import { byProvider } from "./by-provider.js";
import type { InboundAuthType } from "./inbound-auth.js";
import type { ProviderCapabilities } from "./provider-capabilities.js";
import type { ApiProvider } from "../config/config.js";
import { type Provider, PROVIDERS } from "./provider-event.js";
import { STATIC_FORMS_CAPABILITIES } from "./static-forms/static-forms.capabilities.js";
import { THUMBTACK_CAPABILITIES } from "./thumbtack/thumbtack.capabilities.js";
import { YELP_CAPABILITIES } from "./yelp/yelp.capabilities.js";

const CAPABILITIES = byProvider<ProviderCapabilities>(
  { staticforms: STATIC_FORMS_CAPABILITIES, thumbtack: THUMBTACK_CAPABILITIES, yelp: YELP_CAPABILITIES },
  "capabilities",
);

export function capabilities(provider: Provider): ProviderCapabilities {
  return CAPABILITIES[provider];
}

/** Whether the provider has an API (capability `api`): its calls, sync and reconciliation exist. */
export function hasApi(provider: Provider): provider is ApiProvider {
  return CAPABILITIES[provider].api;
}

/** The providers with an API (reconciled, synced, refreshed by the worker's sweeps). */
export const API_PROVIDERS: readonly ApiProvider[] = PROVIDERS.filter(hasApi);

/** Whether `id` has the shape of the provider's account ids (capability `accountId`). */
export function isAccountId(provider: Provider, id: unknown): id is string {
  return typeof id === "string" && CAPABILITIES[provider].accountId.pattern.test(id);
}

/** Whether Leadgate registers a connection's webhook itself, once it holds a grant. */
export function registersWebhook(provider: Provider, inboundAuth: InboundAuthType): boolean {
  return capabilities(provider).registersWebhookWith.includes(inboundAuth);
}
