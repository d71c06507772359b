// The reply channels, in the order a first reply tries them: one list (the provider's inbox today;
// SMS and e-mail next). A lead no channel reaches gets no reply.
import { Injectable } from "@nestjs/common";
import { ProviderInboxChannel } from "../providers/inbox-channel.js";
import type { Provider } from "../providers/provider-event.js";
import type { ReplyChannel } from "../providers/reply-channel.js";

@Injectable()
export class ReplyChannels {
  private readonly channels: readonly ReplyChannel[];

  constructor(inbox: ProviderInboxChannel) {
    this.channels = [inbox];
  }

  /** The first channel that reaches a lead of this provider's connections; undefined: none does. */
  for(provider: Provider): ReplyChannel | undefined {
    return this.channels.find((channel) => channel.reaches(provider));
  }
}
