import { Injectable } from "@nestjs/common";
import { byProvider } from "./by-provider.js";
import type { Provider } from "./provider-event.js";
import type { ProviderFollowUp } from "./provider-follow-up.js";
import { StaticFormsFollowUp } from "./static-forms/static-forms.follow-up.js";
import { ThumbtackFollowUp } from "./thumbtack/thumbtack.follow-up.js";
import { YelpFollowUp } from "./yelp/yelp.follow-up.js";

/**
 * Every provider's lead and reply rules, for the worker's processors. A provider without them does
 * not compile, and fails the boot check.
 */
@Injectable()
export class FollowUpRegistry {
  private readonly followUps: Record<Provider, ProviderFollowUp>;

  constructor(staticForms: StaticFormsFollowUp, thumbtack: ThumbtackFollowUp, yelp: YelpFollowUp) {
    this.followUps = byProvider<ProviderFollowUp>({ staticforms: staticForms, thumbtack, yelp }, "follow-up");
  }

  get(provider: Provider): ProviderFollowUp {
    return this.followUps[provider];
  }
}
