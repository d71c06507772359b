// The plugin list (plugins.ts): complete, each plugin filed under its own id, and what the
// registries and modules read from it.
import { ALL_PLUGINS, checkPlugins, PLUGINS, pluginClasses } from "./plugins.js";
import { PROVIDERS } from "./provider-event.js";
import { capabilities, hasApi } from "./capabilities.js";

describe("the provider plugins", () => {
  it("cover every provider, in the vocabulary's order, each under its own id", () => {
    expect(() => checkPlugins()).not.toThrow();
    expect(ALL_PLUGINS.map((plugin) => plugin.id)).toEqual([...PROVIDERS]);
    for (const id of PROVIDERS) expect(capabilities(id)).toBe(PLUGINS[id].capabilities);
  });

  it("fail the boot when a provider has no plugin, or one filed under another id", () => {
    const { staticforms: _missing, ...rest } = PLUGINS;
    expect(() => checkPlugins(rest as typeof PLUGINS)).toThrow(
      /no plugin registered for provider\(s\): staticforms/,
    );
    expect(() => checkPlugins({ ...PLUGINS, yelp: PLUGINS.thumbtack })).toThrow(/provider\(s\): yelp$/);
  });

  it("a provider with an API names its registrar and lead source; one without has neither", () => {
    for (const plugin of ALL_PLUGINS) {
      expect([plugin.id, Boolean(plugin.registrar), Boolean(plugin.leadSource)]).toEqual([
        plugin.id,
        hasApi(plugin.id),
        hasApi(plugin.id),
      ]);
    }
    expect(pluginClasses("adapter")).toHaveLength(PROVIDERS.length);
    expect(pluginClasses("registrar")).toHaveLength(PROVIDERS.filter(hasApi).length);
  });
});
