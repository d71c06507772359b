import { type Provider, PROVIDERS } from "./provider-event.js";

/**
 * A table with one entry per provider, each naming its own provider. The type makes a missing
 * provider fail to compile; this check makes a missing or misplaced entry fail the boot.
 */
export function byProvider<T extends { readonly provider: Provider }>(
  entries: Record<Provider, T>,
  what: string,
): Record<Provider, T> {
  const missing = PROVIDERS.filter((provider) => entries[provider]?.provider !== provider);
  if (missing.length > 0) throw new Error(`no ${what} registered for provider(s): ${missing.join(", ")}`);
  return entries;
}
