import type { ProviderCapabilities } from "../provider-capabilities.js";

/** Static Forms posts form submissions and has no API: nothing to call, sync or reconcile. */
export const STATIC_FORMS_CAPABILITIES: ProviderCapabilities = {
  provider: "staticforms",
  api: false,
  oauth: false,
  inboundAuth: ["bearer", "basic", "header", "token", "apiKey"],
  registersWebhookWith: [],
  webhookUrl: "connection",
  // No API reads it (it only tells connections apart), so its shape is Leadgate's: a plain id.
  accountId: {
    pattern: /^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,199}$/,
    shape:
      "a Static Forms account or form id: 1 to 200 letters, digits, '.', '_', ':', '@', '+' or '-', starting with a letter or digit",
  },
  marksReplied: false,
};
