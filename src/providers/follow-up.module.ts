import { Module } from "@nestjs/common";
import { FollowUpRegistry } from "./follow-up-registry.js";
import { StaticFormsFollowUp } from "./static-forms/static-forms.follow-up.js";
import { ThumbtackClient } from "./thumbtack/thumbtack.client.js";
import { ThumbtackFollowUp } from "./thumbtack/thumbtack.follow-up.js";
import { YelpClient } from "./yelp/yelp.client.js";
import { YelpFollowUp } from "./yelp/yelp.follow-up.js";

/** The worker's side of the providers: their API clients and lead and reply rules, by provider. */
@Module({
  providers: [
    YelpClient,
    ThumbtackClient,
    StaticFormsFollowUp,
    ThumbtackFollowUp,
    YelpFollowUp,
    FollowUpRegistry,
  ],
  // The clients also serve the proof that a grant reaches an account (src/connections/account-access.ts).
  exports: [FollowUpRegistry, YelpClient, ThumbtackClient],
})
export class FollowUpModule {}
