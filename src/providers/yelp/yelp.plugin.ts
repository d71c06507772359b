import type { ProviderPlugin } from "../provider-plugin.js";
import { webhookError } from "../webhook-route.js";
import { YelpAdapter } from "./yelp.adapter.js";
import { YELP_CAPABILITIES } from "./yelp.capabilities.js";
import { YelpClient } from "./yelp.client.js";
import { YELP_CONFIG_SPEC } from "./yelp.config.js";
import { YelpInbox } from "./yelp.inbox.js";
import { YelpLeadSource } from "./yelp.lead-source.js";
import { YelpRegistrar } from "./yelp.registration.js";

/** Yelp: one platform-wide webhook URL (a URL token), the Leads API with OAuth, registered by Leadgate. */
export const YELP: ProviderPlugin = {
  id: "yelp",
  name: "Yelp",
  capabilities: YELP_CAPABILITIES,
  config: YELP_CONFIG_SPEC,
  webhook: {
    by: "platform",
    summary: "A Yelp lead event; its business id (data.id) selects the connection",
    description:
      "A Yelp lead event on the platform-wide URL secret `{token}` (and optional sender IP allowlist); the business id `data.id` selects the connection, and each update is stored once as a receipt with its jobs before the answer.",
    operationId: "yelpDelivery",
    token: "YELP_WEBHOOK_TOKEN (or YELP_WEBHOOK_TOKEN_PREVIOUS during a rotation)",
    handshake: {
      summary: "Yelp's verification handshake: the value echoed back",
      description:
        'Yelp\'s verification handshake: answers `200 {"verification": X}` with the value sent (`^[A-Za-z0-9]{1,256}$`, else `400`).',
      operationId: "yelpHandshake",
      parameters: [
        {
          name: "verification",
          in: "query",
          required: true,
          schema: { type: "string", pattern: "^[A-Za-z0-9]{1,256}$" },
        },
      ],
      responses: {
        "200": {
          description: "`{ verification }`, the value sent",
          content: {
            "application/json": {
              schema: { type: "object", properties: { verification: { type: "string" } } },
            },
          },
        },
        "400": webhookError("`invalid_verification`: the value is not 1 to 256 letters or digits"),
        "401": webhookError("`unauthorized`: wrong token or sender IP"),
        "429": webhookError("`rate_limited`: too many failed attempts from the IP, with Retry-After"),
      },
    },
  },
  adapter: YelpAdapter,
  inbox: YelpInbox,
  leadSource: YelpLeadSource,
  registrar: YelpRegistrar,
  clients: [YelpClient],
};
