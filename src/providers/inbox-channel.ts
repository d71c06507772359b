// The provider's own inbox as a reply channel: the reply goes where the lead wrote (Yelp's lead
// events, Thumbtack's messages), through the provider's rules (its ProviderInbox).
import { Injectable } from "@nestjs/common";
import { hasApi } from "./capabilities.js";
import { InboxRegistry } from "./inbox-registry.js";
import type { Provider } from "./provider-event.js";
import type { ReplyOutcome } from "./provider-inbox.js";
import type { ReplyChannel, ReplyTarget } from "./reply-channel.js";

@Injectable()
export class ProviderInboxChannel implements ReplyChannel {
  readonly id = "provider" as const;

  constructor(private readonly inboxes: InboxRegistry) {}

  /** A provider with an API has an inbox Leadgate replies in (Static Forms has none). */
  reaches(provider: Provider): boolean {
    return hasApi(provider);
  }

  needsCredentials(provider: Provider): boolean {
    return this.inboxes.get(provider).needsCredentials.reply;
  }

  send(target: ReplyTarget, text: string, outcomeUnknown: boolean): Promise<ReplyOutcome> {
    return this.inboxes.get(target.provider).reply({
      leadId: target.leadId,
      text,
      token: target.token,
      outcomeUnknown,
    });
  }
}
