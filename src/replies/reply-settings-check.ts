// Checks of reply settings beyond their shape (the DTOs check types and ranges): the templates and
// business hours as src/replies parses them, Static Forms' missing reply channel, and the delay
// below the response target once inherited values count. Each failure is `400 validation_failed`
// naming the field (api.md "First replies"), raised before anything is written.
import { validationFailed } from "../common/validation.js";
import { hasApi } from "../providers/capabilities.js";
import type { Provider } from "../providers/provider-event.js";
import { checkBusinessHours } from "./business-hours.js";
import type { AutoResponse, EffectiveSettings, SettingSource } from "./reply-settings.js";
import { checkTemplate, type TemplateError } from "./template.js";

export type FieldErrors = Record<string, string[]>;

/** Reply settings as a body gives them (`null`: back to inheriting; absent: unchanged). */
export interface GivenReplySettings {
  autoResponse?: AutoResponse | null;
  businessHours?: object | null;
  responseTarget?: { seconds: number } | null;
}

/** The template errors of an auto-response, under `<prefix>.text` and `<prefix>.afterHoursText`. */
export function autoResponseErrors(autoResponse: AutoResponse, prefix: string): FieldErrors {
  const errors: FieldErrors = {};
  for (const field of ["text", "afterHoursText"] as const) {
    const text = autoResponse[field];
    const problem = text === undefined ? undefined : checkTemplate(text);
    if (problem) errors[`${prefix}.${field}`] = [withPosition(problem)];
  }
  return errors;
}

/** The message with its position (checkTemplate's sentences mostly say it already). */
function withPosition({ message, position }: TemplateError): string {
  return /\bposition \d/.test(message) ? message : `${message} (at position ${position})`;
}

/** The errors of the given settings' templates and business hours, `prefix` e.g. `settings`. */
export function replySettingsErrors(given: GivenReplySettings, prefix: string): FieldErrors {
  const errors = given.autoResponse ? autoResponseErrors(given.autoResponse, `${prefix}.autoResponse`) : {};
  if (given.businessHours != null) {
    const problem = checkBusinessHours(given.businessHours);
    if (problem) {
      errors[[`${prefix}.businessHours`, problem.field].filter(Boolean).join(".")] = [problem.message];
    }
  }
  return errors;
}

/**
 * A connection's own settings as given: its templates and hours, and no enabled auto-response on a
 * provider without a reply channel (Static Forms: replies go through a provider's API).
 */
export function connectionSettingsErrors(provider: Provider, given: GivenReplySettings): FieldErrors {
  const errors = replySettingsErrors(given, "settings");
  if (given.autoResponse?.enabled === true && !hasApi(provider)) {
    errors["settings.autoResponse.enabled"] = [
      `${provider} has no reply channel: an auto-response cannot be enabled (Yelp and Thumbtack only)`,
    ];
  }
  return errors;
}

/** The most a connection's `settings` or a tenant's `defaults` may hold, as JSON (api.md). */
export const MAX_STORED_SETTINGS_BYTES = 64 * 1024;

/** `400 validation_failed` under `field` when `stored` (the settings as they would be saved) exceeds 64 KiB. */
export function storedSizeErrors(stored: object, field: string): FieldErrors {
  const bytes = Buffer.byteLength(JSON.stringify(stored));
  if (bytes <= MAX_STORED_SETTINGS_BYTES) return {};
  return {
    [field]: [`must be at most ${MAX_STORED_SETTINGS_BYTES} bytes of JSON as stored (${bytes} given)`],
  };
}

/** Throws `400 validation_failed` if there are errors. */
export function refuse(errors: FieldErrors): void {
  if (Object.keys(errors).length > 0) throw validationFailed(errors);
}

const FROM: Record<SettingSource, string> = {
  connection: "the connection's own",
  client: "the client's defaults",
  tenant: "the tenant's defaults",
  default: "the built-in default",
};

/** Why the effective delay is not below the effective response target (api.md), if it is not. */
export function delayProblem(effective: EffectiveSettings): string | undefined {
  const delay = effective.autoResponse?.delaySeconds ?? 0;
  const target = effective.responseTarget.seconds;
  if (delay < target) return undefined;
  return (
    `autoResponse.delaySeconds (${delay}, ${FROM[effective.source.autoResponse]}) must be less than ` +
    `responseTarget.seconds (${target}, ${FROM[effective.source.responseTarget]})`
  );
}

/**
 * The field a delay problem is reported under: the one the request changed (the delay if it named
 * the auto-response, else the target), below `prefix` (`settings`, `defaults`, or none).
 */
export function delayField(given: GivenReplySettings, prefix: string): string {
  const field =
    given.autoResponse != null || given.responseTarget === undefined
      ? "autoResponse.delaySeconds"
      : "responseTarget.seconds";
  return prefix ? `${prefix}.${field}` : field;
}

/** The delay problem of `effective`, if any, under the field `given` changed. */
export function delayErrors(
  effective: EffectiveSettings,
  given: GivenReplySettings,
  prefix: string,
): FieldErrors {
  const problem = delayProblem(effective);
  return problem ? { [delayField(given, prefix)]: [problem] } : {};
}
