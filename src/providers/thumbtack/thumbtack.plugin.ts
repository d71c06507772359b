import type { ProviderPlugin } from "../provider-plugin.js";
import { ThumbtackAdapter } from "./thumbtack.adapter.js";
import { THUMBTACK_CAPABILITIES } from "./thumbtack.capabilities.js";
import { ThumbtackClient } from "./thumbtack.client.js";
import { THUMBTACK_CONFIG_SPEC } from "./thumbtack.config.js";
import { ThumbtackInbox } from "./thumbtack.inbox.js";
import { ThumbtackLeadSource } from "./thumbtack.lead-source.js";
import { ThumbtackRegistrar } from "./thumbtack.registration.js";

/** Thumbtack: a webhook per connection (Basic auth), its API with OAuth, registered by Leadgate. */
export const THUMBTACK: ProviderPlugin = {
  id: "thumbtack",
  name: "Thumbtack",
  capabilities: THUMBTACK_CAPABILITIES,
  config: THUMBTACK_CONFIG_SPEC,
  webhook: {
    by: "connection",
    summary: "A Thumbtack event (HTTP Basic, a custom header or a ?token= URL secret)",
    description:
      "A Thumbtack event, authenticated by the HTTP Basic credentials given to Thumbtack, a custom header or a `?token=` URL secret; stored once as a receipt with its jobs before the answer.",
    operationId: "thumbtackDelivery",
  },
  adapter: ThumbtackAdapter,
  inbox: ThumbtackInbox,
  leadSource: ThumbtackLeadSource,
  registrar: ThumbtackRegistrar,
  clients: [ThumbtackClient],
};
