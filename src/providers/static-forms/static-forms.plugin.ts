import type { ProviderPlugin } from "../provider-plugin.js";
import { StaticFormsAdapter } from "./static-forms.adapter.js";
import { STATIC_FORMS_CAPABILITIES } from "./static-forms.capabilities.js";
import { StaticFormsInbox } from "./static-forms.inbox.js";

/** Static Forms: form submissions by webhook, no API (no lead source, no registrar). */
export const STATIC_FORMS: ProviderPlugin = {
  id: "staticforms",
  name: "Static Forms",
  capabilities: STATIC_FORMS_CAPABILITIES,
  webhook: {
    by: "connection",
    summary: "A Static Forms submission (sender authenticated as the connection is configured)",
    description:
      "A Static Forms submission, authenticated by the connection's Bearer, Basic, custom header, `?token=` or `data.apiKey`; stored once as a receipt with its jobs before the answer.",
    operationId: "staticFormsDelivery",
  },
  adapter: StaticFormsAdapter,
  inbox: StaticFormsInbox,
};
