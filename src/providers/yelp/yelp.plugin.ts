import type { ProviderPlugin } from "../provider-plugin.js";
import { YelpAdapter } from "./yelp.adapter.js";
import { YELP_CAPABILITIES } from "./yelp.capabilities.js";
import { YelpClient } from "./yelp.client.js";
import { YelpFollowUp } from "./yelp.follow-up.js";
import { YelpLeadSource } from "./yelp.lead-source.js";
import { YelpRegistrar } from "./yelp.registration.js";

/** Yelp: one platform-wide webhook URL (a URL token), the Leads API with OAuth, registered by Leadgate. */
export const YELP: ProviderPlugin = {
  id: "yelp",
  name: "Yelp",
  capabilities: YELP_CAPABILITIES,
  adapter: YelpAdapter,
  followUp: YelpFollowUp,
  leadSource: YelpLeadSource,
  registrar: YelpRegistrar,
  clients: [YelpClient],
};
