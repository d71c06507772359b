import type { ProviderCapabilities } from "../provider-capabilities.js";

/** Static Forms posts form submissions and has no API: nothing to call, sync or reconcile. */
export const STATIC_FORMS_CAPABILITIES: ProviderCapabilities = {
  provider: "staticforms",
  api: false,
  oauth: false,
  inboundAuth: ["bearer", "basic", "header", "token", "apiKey"],
  registersWebhookWith: [],
  webhookUrl: "connection",
};
