// The providers this installation has: one line each. A provider is its folder and its line here
// (and its id in PROVIDERS, the vocabulary rows and types are checked against).
import type { ProviderPlugin } from "./provider-plugin.js";
import type { Provider } from "./provider-event.js";
import { PROVIDERS } from "./provider-event.js";
import { STATIC_FORMS } from "./static-forms/static-forms.plugin.js";
import { THUMBTACK } from "./thumbtack/thumbtack.plugin.js";
import { YELP } from "./yelp/yelp.plugin.js";

export const PLUGINS: Record<Provider, ProviderPlugin> = {
  staticforms: STATIC_FORMS,
  thumbtack: THUMBTACK,
  yelp: YELP,
};

/**
 * The boot check (and a unit test): every provider of the vocabulary has its plugin, filed under its
 * own id, with capabilities of that provider. Throws naming the providers that do not.
 */
export function checkPlugins(plugins: Record<Provider, ProviderPlugin> = PLUGINS): void {
  const wrong = PROVIDERS.filter(
    (id) =>
      plugins[id]?.id !== id ||
      plugins[id].capabilities.provider !== id ||
      (plugins[id].config !== undefined && plugins[id].config.id !== id),
  );
  if (wrong.length > 0) throw new Error(`no plugin registered for provider(s): ${wrong.join(", ")}`);
}
checkPlugins();

/** Every plugin, in the vocabulary's order. */
export const ALL_PLUGINS: readonly ProviderPlugin[] = PROVIDERS.map((id) => PLUGINS[id]);

/** The classes of every plugin of one role (for the modules that provide them). */
export function pluginClasses<K extends "adapter" | "inbox" | "leadSource" | "registrar">(role: K) {
  return ALL_PLUGINS.flatMap((plugin) => (plugin[role] ? [plugin[role]] : []));
}

/** Every plugin's configuration (loadConfig reads each provider's variables from it: src/app-config.ts). */
export const PROVIDER_CONFIGS = ALL_PLUGINS.flatMap((plugin) => (plugin.config ? [plugin.config] : []));

/** Every plugin's API clients. */
export const PLUGIN_CLIENTS = ALL_PLUGINS.flatMap((plugin) => plugin.clients ?? []);
