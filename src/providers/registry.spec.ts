import { loadConfig } from "../config/config.js";
import { AdapterRegistry } from "./registry.js";
import { StaticFormsAdapter } from "./static-forms/static-forms.adapter.js";
import { ThumbtackAdapter } from "./thumbtack/thumbtack.adapter.js";
import { YelpAdapter } from "./yelp/yelp.adapter.js";

const yelp = new YelpAdapter(
  loadConfig({
    DATABASE_URL: "postgresql://x@localhost/x",
    LEADGATE_ENCRYPTION_KEY: Buffer.alloc(32).toString("base64"),
  }),
);

describe("AdapterRegistry", () => {
  it("serves every provider's adapter", () => {
    const registry = new AdapterRegistry(new StaticFormsAdapter(), new ThumbtackAdapter(), yelp);
    expect(registry.get("staticforms").provider).toBe("staticforms");
    expect(registry.get("thumbtack").provider).toBe("thumbtack");
    expect(registry.get("yelp").provider).toBe("yelp");
  });

  it("fails the boot when a provider has no adapter of its own", () => {
    const thumbtack = new ThumbtackAdapter();
    expect(() => new AdapterRegistry(thumbtack as unknown as StaticFormsAdapter, thumbtack, yelp)).toThrow(
      /no adapter registered for provider\(s\): staticforms/,
    );
  });
});
