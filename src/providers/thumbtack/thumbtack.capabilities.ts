import type { ProviderCapabilities } from "../provider-capabilities.js";

/**
 * Thumbtack: a partner API with OAuth; its webhooks authenticate with Basic credentials given to it
 * when the webhook is created, or a `?token=` URL secret (self-serve webhooks without auth).
 * Leadgate registers the webhook for those two; a custom header is set up by hand (`manual`).
 */
export const THUMBTACK_CAPABILITIES: ProviderCapabilities = {
  provider: "thumbtack",
  api: true,
  oauth: true,
  inboundAuth: ["basic", "header", "token"],
  registersWebhookWith: ["basic", "token"],
  webhookUrl: "connection",
};
