// Telling a provider to send a connection's webhooks: create or repair, update
// the credentials after a rotation, remove on disconnect. One registrar per provider with an API;
// stateless (the connection's token, URL, credentials and last known registration come in as
// arguments), and safe to run again: every step looks at the provider's side first, so a retry
// after an unknown outcome (a timeout) does not register twice.
import type { InboundCredentials } from "./inbound-auth.js";
import type { Provider } from "./provider-event.js";

/** What a provider-sync job does (its job key names it: src/jobs/provider-sync.ts). */
export const REGISTRATION_ACTIONS = ["sync", "rotate", "remove"] as const;
export type RegistrationAction = (typeof REGISTRATION_ACTIONS)[number];

/** The provider-side registration as last stored for the connection. */
export interface KnownRegistration {
  webhookId: string | null;
  expiresAt: Date | null;
  /**
   * The URL Leadgate registered the webhook with, where the provider cannot be asked for it (Yelp
   * self-serve); null when not kept (other providers, or registered before Leadgate kept it).
   */
  webhookUrl: string | null;
}

export interface RegistrationTarget {
  /** The provider account (Yelp business id, Thumbtack businessID). */
  accountId: string;
  /** The connection's provider API token (undefined: none; the call is a credential error). */
  token: string | undefined;
  /** Where the provider sends this connection's webhooks (with `?token=` for token auth). */
  webhookUrl: string;
  /** The connection's current inbound secrets, to give the provider (Thumbtack Basic). */
  inbound: InboundCredentials;
  known: KnownRegistration;
  /**
   * Of these provider accounts, the ones Leadgate holds only in disabled connections (their
   * subscriptions are ours to remove): for providers whose listing shows other accounts.
   */
  released(accountIds: string[]): Promise<string[]>;
}

/**
 * The registration after a sync or rotation: the provider's id of our webhook, its expiry, and
 * the URL it was registered with when the provider cannot be asked for it later (else absent).
 */
export interface Registered {
  webhookId: string | null;
  expiresAt: Date | null;
  webhookUrl?: string | null;
}

export interface ProviderRegistrar {
  readonly provider: Provider;
  /** Ours present and enabled: kept (renewed when it expires soon); missing or disabled: created. */
  sync(target: RegistrationTarget): Promise<Registered>;
  /** The inbound secrets changed: the provider's copy follows (a sync when there is nothing to update). */
  rotate(target: RegistrationTarget): Promise<Registered>;
  /** Disconnect: ours removed at the provider (already gone is fine). */
  remove(target: RegistrationTarget): Promise<void>;
  /**
   * One read call that succeeds only if `accessToken` reaches the account (the proof of a grant or
   * of pasted credentials): a CredentialError or a 404 says it does not.
   */
  probeAccount(accessToken: string, accountId: string): Promise<void>;
}

/** Whether a failed call found nothing to act on (a 404): removing what is gone is done. */
export function isGone(error: unknown): boolean {
  return error instanceof Error && "code" in error && (error as { code: unknown }).code === "http_404";
}
