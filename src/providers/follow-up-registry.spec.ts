import type { ThumbtackClient } from "./thumbtack/thumbtack.client.js";
import type { YelpClient } from "./yelp/yelp.client.js";
import { FollowUpRegistry } from "./follow-up-registry.js";
import { StaticFormsFollowUp } from "./static-forms/static-forms.follow-up.js";
import { ThumbtackFollowUp } from "./thumbtack/thumbtack.follow-up.js";
import { YelpFollowUp } from "./yelp/yelp.follow-up.js";

const thumbtack = new ThumbtackFollowUp({} as ThumbtackClient);
const yelp = new YelpFollowUp({} as YelpClient);

describe("FollowUpRegistry", () => {
  it("serves every provider's lead and reply rules", () => {
    const registry = new FollowUpRegistry(new StaticFormsFollowUp(), thumbtack, yelp);
    expect(registry.get("staticforms")).toBeInstanceOf(StaticFormsFollowUp);
    expect(registry.get("thumbtack")).toBe(thumbtack);
    expect(registry.get("yelp")).toBe(yelp);
  });

  it("fails the boot when a provider has no rules of its own", () => {
    expect(() => new FollowUpRegistry(thumbtack as unknown as StaticFormsFollowUp, thumbtack, yelp)).toThrow(
      /no follow-up registered for provider\(s\): staticforms/,
    );
  });
});
