// The values a first reply's template is rendered with (api.md "First replies", merge fields), from
// the lead as stored (leads.first_name, leads.name, leads.service) and its connection. One home: the
// initial-response worker and the admin preview render with the same values.
import { PLUGINS } from "../providers/plugins.js";
import type { Provider } from "../providers/provider-event.js";
import type { MergeValues } from "./template.js";

/** The stored lead's merge fields (null: the provider gave none). */
export interface LeadMergeFields {
  firstName: string | null;
  name: string | null;
  service: string | null;
}

export interface ConnectionMergeFields {
  displayName: string;
  provider: Provider;
}

/** A missing (null or blank) value is left out, so the template's fallback applies. */
export function mergeValues(lead: LeadMergeFields, connection: ConnectionMergeFields): MergeValues {
  const values: MergeValues = {
    "lead.firstName": lead.firstName ?? undefined,
    "lead.name": lead.name ?? undefined,
    "lead.service": lead.service ?? undefined,
    "business.name": connection.displayName,
    provider: PLUGINS[connection.provider].name, // `{{provider}}` as the customer knows it
  };
  return Object.fromEntries(
    Object.entries(values).filter(([, value]) => value !== undefined && value.trim() !== ""),
  );
}
