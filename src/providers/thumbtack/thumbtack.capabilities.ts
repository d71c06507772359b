import type { ProviderCapabilities } from "../provider-capabilities.js";

/**
 * Thumbtack: a partner API with OAuth; its webhooks authenticate with Basic credentials given to it
 * when the webhook is created, or a `?token=` URL secret (self-serve webhooks without auth).
 * Leadgate registers the webhook for those two; a custom header is set up by hand (`manual`).
 */
export const THUMBTACK_CAPABILITIES: ProviderCapabilities = {
  provider: "thumbtack",
  api: true,
  // HTTP Basic at the token endpoint, the RFC 6749 default its auth server (paths /oauth2/auth,
  // /oauth2/token) expects: [ASSUMPTION], no readable doc names it.
  oauth: { clientAuth: "basic" },
  inboundAuth: ["basic", "header", "token"],
  registersWebhookWith: ["basic", "token"],
  webhookUrl: "connection",
  // A businessID is a decimal number in a string (providers.md fixtures: 18 digits).
  accountId: { pattern: /^[0-9]{1,32}$/, shape: "a Thumbtack businessID: 1 to 32 digits" },
  marksReplied: false,
};
