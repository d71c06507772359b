import type { ProviderCapabilities } from "../provider-capabilities.js";

/**
 * Yelp: the Leads API with OAuth; one platform-wide webhook URL with a URL token (the business id
 * in the body selects the connection), registered by Leadgate for every connection it holds a grant of.
 */
export const YELP_CAPABILITIES: ProviderCapabilities = {
  provider: "yelp",
  api: true,
  // The client's credentials in the form body (providers.md, [DOCS]).
  oauth: { clientAuth: "post" },
  inboundAuth: ["none"],
  registersWebhookWith: ["none"],
  webhookUrl: { platformToken: "YELP_WEBHOOK_TOKEN" },
  // Yelp business ids are URL-safe (providers.md: the docs' example is 22 such characters); the
  // length is left some room, the characters not.
  accountId: {
    pattern: /^[A-Za-z0-9_-]{1,64}$/,
    shape: "a Yelp business id: 1 to 64 letters, digits, '_' or '-'",
  },
  marksReplied: true,
};
