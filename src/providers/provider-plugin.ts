// A provider as one plugin: everything Leadgate knows of it, declared by its folder
// (`src/providers/<name>/<name>.plugin.ts`) and registered by one line in `plugins.ts`. The
// registries, the modules that provide its classes, GET /admin/providers and the boot check all read
// the list; nothing outside src/providers/ chooses by a provider's name.
//
// The shape fits a provider with no API (Static Forms: an adapter and rules, no lead source or
// registrar), one whose webhook URL is one for the whole platform (Yelp: `capabilities.webhookUrl`),
// and one only polled (a lead source without webhooks).
import type { Type } from "@nestjs/common";
import type { ProviderConfigSpec } from "../config/provider-config.js";
import type { LeadSource } from "./lead-source.js";
import type { ProviderAdapter } from "./provider-adapter.js";
import type { ProviderCapabilities } from "./provider-capabilities.js";
import type { Provider } from "./provider-event.js";
import type { ProviderInbox } from "./provider-inbox.js";
import type { ProviderRegistrar } from "./provider-registration.js";
import type { WebhookRoute } from "./webhook-route.js";

export interface ProviderPlugin {
  /** The provider's id, as URLs, rows and the API name it. */
  readonly id: Provider;
  /** Its name as people read it (the console, alerts). */
  readonly name: string;
  /** What it can do, as data (capabilities.ts answers from here). */
  readonly capabilities: ProviderCapabilities;
  /**
   * Its configuration: its own variables as a section (injected by `providerConfigToken(id)`), its
   * OAuth endpoints and its call budget. Absent: it has no variables.
   */
  readonly config?: ProviderConfigSpec;
  /** Where its webhooks arrive and how they are documented (src/ingestion/webhook-routes.ts mounts them). */
  readonly webhook: WebhookRoute;
  /** Verifies and normalizes its webhooks (the API process). */
  readonly adapter: Type<ProviderAdapter>;
  /** Its lead and reply rules: reading a lead, replying in its inbox, who answered (the worker). */
  readonly inbox: Type<ProviderInbox>;
  /** Its lists of leads, for reconciliation and backfill; absent: nothing to reconcile (`manual`). */
  readonly leadSource?: Type<LeadSource>;
  /** Registers its webhooks; absent: the account's owner does (registration `manual`). */
  readonly registrar?: Type<ProviderRegistrar>;
  /** Its API clients, which the rules, the lead source and the registrar inject. */
  readonly clients?: readonly Type<unknown>[];
}
