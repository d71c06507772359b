// A reply channel: a way Leadgate answers a lead (docs/design.md "Conversations"). The provider's own inbox
// is the only one today (inbox-channel.ts); SMS and e-mail on the client's senders will be the next
// two, each a plugin on the same list (src/jobs/reply-channels.ts), so the first reply asks a list,
// never a provider or a channel by name.
import type { Provider } from "./provider-event.js";
import type { ReplyOutcome } from "./provider-inbox.js";

export const REPLY_CHANNEL_IDS = ["provider"] as const;
export type ReplyChannelId = (typeof REPLY_CHANNEL_IDS)[number];

/** Whom a reply goes to: the lead of a connection, with the connection's provider token. */
export interface ReplyTarget {
  provider: Provider;
  leadId: string;
  token: string | undefined;
}

export interface ReplyChannel {
  readonly id: ReplyChannelId;
  /** Whether the channel can reach a lead of this provider's connections at all. */
  reaches(provider: Provider): boolean;
  /** Whether sending calls the provider with the connection's credentials (it waits `blocked` on a credential problem). */
  needsCredentials(provider: Provider): boolean;
  /**
   * Sends the text, or says why not; never twice for one unknown outcome (`outcomeUnknown`: an
   * earlier attempt may have sent it, look before sending).
   */
  send(target: ReplyTarget, text: string, outcomeUnknown: boolean): Promise<ReplyOutcome>;
}
