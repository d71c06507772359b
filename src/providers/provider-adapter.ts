import type { IncomingHttpHeaders } from "node:http";
import type { Provider, ProviderEvent } from "./provider-event.js";
import type { InboundCredentials } from "./inbound-auth.js";

/** One webhook delivery as it arrived. `body` is the parsed JSON: untrusted until verified. */
export interface InboundDelivery {
  rawBody: Buffer;
  body: unknown;
  headers: IncomingHttpHeaders;
  query: Record<string, string | undefined>;
  ip: string;
}

/** What an adapter needs of a connection (nothing per request is kept on the adapter). */
export interface ConnectionForIngest {
  id: string;
  externalAccountId: string;
  /** Every credential set currently accepted: the current one, plus the previous during a rotation's grace period. */
  credentials: InboundCredentials[];
}

/**
 * The checks of a platform-wide webhook URL (plugin `webhook.by: "platform"`): the URL's token and
 * the sender, before anything else; the account that selects the connection; the handshake's answer.
 * Each throws AppErrors (401 / 400) on rejection.
 */
export interface PlatformWebhook {
  verifyPlatform(token: string, ip: string): void;
  accountIdOf(delivery: InboundDelivery): string;
  /** The body of the `GET` handshake's answer to its query, where the provider has one. */
  handshake?(query: Record<string, unknown>): unknown;
}

/**
 * A provider adapter: stateless, one per provider. `verify` authenticates the sender with the
 * connection's configuration before any field of the payload is trusted; `normalize` turns the
 * body into ProviderEvents. Both throw AppErrors (401 / 400) on rejection.
 */
export interface ProviderAdapter {
  readonly provider: Provider;
  /** Present when its plugin's webhook is platform-wide (one URL for every connection). */
  readonly platform?: PlatformWebhook;
  verify(delivery: InboundDelivery, connection: ConnectionForIngest): void;
  normalize(delivery: InboundDelivery, connection: ConnectionForIngest): ProviderEvent[];
}
