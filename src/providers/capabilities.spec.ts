// The account id shapes (capability `accountId`): each provider's real ids pass, and no shape lets
// an id change a provider URL's path, whatever the provider.
import { isAccountId } from "./capabilities.js";
import { PROVIDERS } from "./provider-event.js";

describe("account id shapes", () => {
  it("accept the providers' real ids (providers.md fixtures)", () => {
    expect(isAccountId("yelp", "tEstBiz_Kx9Lm2Qp7Rs4Vw")).toBe(true);
    expect(isAccountId("thumbtack", "700000000000000404")).toBe(true);
    expect(isAccountId("staticforms", "contact-form.v2")).toBe(true);
  });

  it.each(PROVIDERS)("%s: no path separator, query, fragment, escape, space or dot-only id", (provider) => {
    for (const id of ["", ".", "..", "a/b", "a?b", "a#b", "a%2Fb", "a b", "a\nb", "a\\b", 42]) {
      expect([id, isAccountId(provider, id)]).toEqual([id, false]);
    }
  });
});
