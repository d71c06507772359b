import type { InboundAuthType } from "./inbound-auth.js";
import type { Provider } from "./provider-event.js";

/** What one provider can do (the table of all: capabilities.ts). */
export interface ProviderCapabilities {
  readonly provider: Provider;
  /**
   * A provider API Leadgate calls with the connection's credentials (lead fetch, replies, listing
   * leads for reconciliation, webhook registration). Without one there is nothing to sync,
   * reconcile or refresh, and no call needs credentials.
   */
  readonly api: boolean;
  /**
   * Accounts are connected through the provider's OAuth consent screen (and their tokens refreshed),
   * and how its token endpoint takes the client's credentials (RFC 6749 §2.3.1): in the form body
   * (`post`) or as HTTP Basic (`basic`). False: no OAuth.
   */
  readonly oauth: false | { readonly clientAuth: "post" | "basic" };
  /** The sender authentications a connection of this provider can be configured with; the first is the default. */
  readonly inboundAuth: readonly InboundAuthType[];
  /**
   * The inbound auths with which Leadgate registers the provider-side webhook itself (once it holds
   * a grant); with any other the owner registers it (`registration.status: manual`).
   */
  readonly registersWebhookWith: readonly InboundAuthType[];
  /**
   * `connection`: a webhook URL per connection; otherwise one URL for all connections, whose token is
   * the named variable's (shown as `{VARIABLE}`, never its value).
   */
  readonly webhookUrl: "connection" | { readonly platformToken: string };
  /**
   * The shape of the provider's account id (`externalAccountId`), checked when a connection is
   * created or connected (400 validation_failed otherwise). It reaches provider URL paths, so no
   * pattern admits `/`, `?`, `#`, `%` or an id of dots only. `shape` says it in words, for the error.
   */
  readonly accountId: { readonly pattern: RegExp; readonly shape: string };
  /**
   * The provider can be told that the business answered a lead outside it (mark-replied:
   * ProviderInbox.markReplied), so a mark-replied makes a `provider-mark-replied` job.
   */
  readonly marksReplied: boolean;
}
