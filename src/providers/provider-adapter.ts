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
 * A provider adapter: stateless, one per provider. `verify` authenticates the sender with the
 * connection's configuration before any field of the payload is trusted; `normalize` turns the
 * body into ProviderEvents. Both throw AppErrors (401 / 400) on rejection.
 */
export interface ProviderAdapter {
  readonly provider: Provider;
  verify(delivery: InboundDelivery, connection: ConnectionForIngest): void;
  normalize(delivery: InboundDelivery, connection: ConnectionForIngest): ProviderEvent[];
}
