// Reply templates (api.md "First replies"): plain text with merge fields `{{lead.firstName}}`,
// `{{field|fallback}}`. Logic-less: a field is looked up in a closed list, never on an object.
// CONTRACT STUB: implemented on branch `replies`.

export const MERGE_FIELDS = [
  "lead.firstName",
  "lead.name",
  "lead.service",
  "business.name",
  "provider",
] as const;
export type MergeField = (typeof MERGE_FIELDS)[number];

/** The values a template is rendered with; an absent (or empty) value uses the fallback. */
export type MergeValues = Partial<Record<MergeField, string>>;

/** Longest text a reply may have; a longer rendering is cut at the last word boundary. */
export const MAX_REPLY_LENGTH = 1000;
/** The longest plausible value of a field, for the saved template's longest rendering. */
export const LONGEST_FIELD_VALUE = 80;

/** Why a template was refused: a sentence, and the 0-based character offset where the problem is. */
export interface TemplateError {
  message: string;
  position: number;
}

/** The template's problem, if any (unknown field, unbalanced braces, longest rendering too long). */
export function checkTemplate(_text: string): TemplateError | undefined {
  throw new Error("not implemented");
}

/**
 * The text to send: the template rendered with `values` (a missing value without a fallback renders
 * as nothing and the whitespace around it collapses), cut to MAX_REPLY_LENGTH at the last word
 * boundary. A text that does not parse (saved before templates existed) is sent literally.
 */
export function renderTemplate(_text: string, _values: MergeValues): string {
  throw new Error("not implemented");
}
