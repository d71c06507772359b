// The values a first reply's merge fields take (api.md "First replies", the table of merge fields):
// the lead's fields as its lead-upserts stored them, the connection's name, the provider's name.
import type { Provider } from "../providers/provider-event.js";
import type { MergeValues } from "./template.js";

const PROVIDER_NAMES: Record<Provider, string> = {
  yelp: "Yelp",
  thumbtack: "Thumbtack",
  staticforms: "Static Forms",
};

export function mergeValues(
  lead: { firstName?: string | null; name?: string | null; service?: string | null } | undefined,
  connection: { displayName: string; provider: Provider },
): MergeValues {
  const values: MergeValues = {
    "business.name": connection.displayName,
    provider: PROVIDER_NAMES[connection.provider],
  };
  if (lead?.firstName) values["lead.firstName"] = lead.firstName;
  if (lead?.name) values["lead.name"] = lead.name;
  if (lead?.service) values["lead.service"] = lead.service;
  return values;
}
