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
};
