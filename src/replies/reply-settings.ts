// The reply settings a connection sets or inherits (api.md "First replies", "Clients"): each of
// autoResponse, businessHours and responseTarget is taken whole from the connection if it sets it,
// else from its client's defaults, else from its tenant's, else the built-in default.
import { type BusinessHours, isOpen } from "./business-hours.js";
import { type MergeValues, renderTemplate } from "./template.js";

export interface AutoResponse {
  enabled: boolean;
  text: string;
  /** Used outside business hours (default: `text`). */
  afterHoursText?: string;
  /** 0–900 (default 0), less than the response target. */
  delaySeconds?: number;
}

export interface ResponseTarget {
  seconds: number;
}

/** The inheritable settings, as a connection, a client's or a tenant's `defaults` store them. */
export interface ReplySettings {
  autoResponse?: AutoResponse;
  businessHours?: BusinessHours;
  responseTarget?: ResponseTarget;
}

export const REPLY_SETTINGS = ["autoResponse", "businessHours", "responseTarget"] as const;
export type ReplySetting = (typeof REPLY_SETTINGS)[number];
export type SettingSource = "connection" | "client" | "tenant" | "default";

/** What a connection inherits: its client's defaults, then its tenant's. */
export interface InheritedSettings {
  client: ReplySettings | null | undefined;
  tenant: ReplySettings | null | undefined;
}

export const DEFAULT_RESPONSE_TARGET: ResponseTarget = { seconds: 300 };

/**
 * effectiveSettings' response target as an SQL expression (float8 seconds) over a connection's
 * `settings`, its client's and its tenant's `defaults` columns, for statements that filter or count by it.
 */
export const responseTargetSql = (settings: string, clientDefaults: string, tenantDefaults: string): string =>
  `COALESCE((${settings} -> 'responseTarget' ->> 'seconds')::float8,
            (${clientDefaults} -> 'responseTarget' ->> 'seconds')::float8,
            (${tenantDefaults} -> 'responseTarget' ->> 'seconds')::float8, ${DEFAULT_RESPONSE_TARGET.seconds}::float8)`;

export interface EffectiveSettings {
  autoResponse: AutoResponse | null;
  businessHours: BusinessHours | null;
  responseTarget: ResponseTarget;
  source: Record<ReplySetting, SettingSource>;
}

export function effectiveSettings(
  connection: ReplySettings,
  inherited: InheritedSettings,
): EffectiveSettings {
  const { client, tenant } = inherited;
  const pick = <K extends ReplySetting>(key: K): [ReplySettings[K] | undefined, SettingSource] =>
    connection[key] != null
      ? [connection[key], "connection"]
      : client?.[key] != null
        ? [client[key], "client"]
        : tenant?.[key] != null
          ? [tenant[key], "tenant"]
          : [undefined, "default"];
  const [autoResponse, autoResponseSource] = pick("autoResponse");
  const [businessHours, businessHoursSource] = pick("businessHours");
  const [responseTarget, responseTargetSource] = pick("responseTarget");
  return {
    autoResponse: autoResponse ?? null,
    businessHours: businessHours ?? null,
    responseTarget: responseTarget ?? DEFAULT_RESPONSE_TARGET,
    source: {
      autoResponse: autoResponseSource,
      businessHours: businessHoursSource,
      responseTarget: responseTargetSource,
    },
  };
}

export type ReplyVariant = "business-hours" | "after-hours";

/** The reply to send at `at`: which variant the hours give, and the text rendered from it. */
export interface PlannedReply {
  text: string;
  variant: ReplyVariant;
}

/** The variant the hours give at `at`, and its text rendered with `values` (api.md: `afterHoursText` defaults to `text`). */
export function plannedReply(
  autoResponse: AutoResponse,
  businessHours: BusinessHours | null,
  values: MergeValues,
  at: Date,
): PlannedReply {
  const variant: ReplyVariant = isOpen(businessHours, at) ? "business-hours" : "after-hours";
  const template =
    variant === "after-hours" ? (autoResponse.afterHoursText ?? autoResponse.text) : autoResponse.text;
  return { text: renderTemplate(template, values), variant };
}
