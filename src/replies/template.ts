// Reply templates (api.md "First replies"): plain text with merge fields `{{lead.firstName}}`,
// `{{field|fallback}}`. Logic-less: a field is looked up in a closed list, never on an object.
// Grammar, parsed by hand: `{{` and `}}` must pair up; single braces are plain text; inside a pair,
// a known field name, optionally `|` and a fallback (no braces), both trimmed of surrounding space.

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
export function checkTemplate(text: string): TemplateError | undefined {
  if (text.trim() === "") return { message: "the template is empty", position: 0 };
  const parsed = parse(text);
  return "error" in parsed ? parsed.error : tooLong(parsed.segments);
}

/**
 * The text to send: the template rendered with `values` (a missing value without a fallback renders
 * as nothing and the whitespace around it collapses), cut to MAX_REPLY_LENGTH at the last word
 * boundary. A text that does not parse (saved before templates existed) is sent literally.
 */
export function renderTemplate(text: string, values: MergeValues): string {
  const parsed = parse(text);
  if ("error" in parsed) return cut(text);
  const pieces = parsed.segments.map((s) => (s.kind === "text" ? s.text : valueOf(s, values)));
  return cut(joinCollapsing(pieces));
}

type Segment =
  | { kind: "text"; text: string; position: number }
  | { kind: "field"; field: MergeField; fallback: string; position: number };

const isMergeField = (name: string): name is MergeField => (MERGE_FIELDS as readonly string[]).includes(name);
const failure = (message: string, position: number) => ({ error: { message, position } });

/** `{{ name }}` or `{{ name | fallback }}` between plain text; single braces are plain text. */
function parse(text: string): { segments: Segment[] } | { error: TemplateError } {
  const segments: Segment[] = [];
  let at = 0;
  for (;;) {
    const open = text.indexOf("{{", at);
    const close = text.indexOf("}}", at);
    if (close !== -1 && (open === -1 || close < open))
      return failure(`unbalanced braces: "}}" at position ${close} has no "{{"`, close);
    if (open === -1) break;
    if (open > at) segments.push({ kind: "text", text: text.slice(at, open), position: at });
    const end = text.indexOf("}}", open + 2);
    if (end === -1) return failure(`unbalanced braces: "{{" at position ${open} is not closed by "}}"`, open);
    const inner = text.slice(open + 2, end);
    const brace = inner.search(/[{}]/);
    if (brace !== -1) {
      const position = open + 2 + brace;
      return failure(
        `unbalanced braces: "${inner[brace]}" at position ${position} inside a merge field`,
        position,
      );
    }
    const bar = inner.indexOf("|");
    const name = (bar === -1 ? inner : inner.slice(0, bar)).trim();
    if (name === "") return failure(`empty merge field at position ${open}`, open);
    if (!isMergeField(name))
      return failure(
        `unknown merge field "${name}" at position ${open}; known: ${MERGE_FIELDS.join(", ")}`,
        open,
      );
    const fallback = bar === -1 ? "" : inner.slice(bar + 1).trim();
    segments.push({ kind: "field", field: name, fallback, position: open });
    at = end + 2;
  }
  if (at < text.length) segments.push({ kind: "text", text: text.slice(at), position: at });
  return { segments };
}

/** The longest rendering: every field at its longest plausible value, or its fallback if longer. */
function tooLong(segments: Segment[]): TemplateError | undefined {
  const lengthOf = (s: Segment) =>
    s.kind === "text" ? s.text.length : Math.max(LONGEST_FIELD_VALUE, s.fallback.length);
  const total = segments.reduce((sum, s) => sum + lengthOf(s), 0);
  if (total <= MAX_REPLY_LENGTH) return undefined;
  let length = 0;
  let position = 0;
  for (const s of segments) {
    if (length + lengthOf(s) > MAX_REPLY_LENGTH) {
      position = s.kind === "text" ? s.position + (MAX_REPLY_LENGTH - length) : s.position;
      break;
    }
    length += lengthOf(s);
  }
  return {
    message:
      `the longest rendering is ${total} characters (each merge field at ${LONGEST_FIELD_VALUE}), ` +
      `over the limit of ${MAX_REPLY_LENGTH} from position ${position}`,
    position,
  };
}

/** The value, else the fallback; null when the field renders as nothing. A blank value is missing. */
function valueOf(field: Extract<Segment, { kind: "field" }>, values: MergeValues): string | null {
  const value = values[field.field];
  if (typeof value === "string" && value.trim() !== "") return value;
  return field.fallback === "" ? null : field.fallback;
}

const CLOSING_PUNCTUATION = /^[,.;:!?)\]}…]/;

/**
 * Joins the rendered pieces; where fields rendered as nothing (null), the whitespace runs around them
 * become one: the run with the most line breaks (the author's layout), else the longest; none before
 * closing punctuation ("Hi {{f}}, thanks" ⇒ "Hi, thanks"), at the start or at the end.
 */
function joinCollapsing(pieces: (string | null)[]): string {
  let out = "";
  let runs: string[] | undefined; // the whitespace around the removed field(s) not yet joined
  for (const piece of pieces) {
    if (piece === null) {
      if (runs) continue;
      const kept = out.trimEnd();
      runs = [out.slice(kept.length)];
      out = kept;
      continue;
    }
    if (!runs) {
      out += piece;
      continue;
    }
    const rest = piece.trimStart();
    runs.push(piece.slice(0, piece.length - rest.length));
    if (rest === "") continue;
    out += out === "" ? rest : joiner(runs, rest) + rest;
    runs = undefined;
  }
  return out;
}

function joiner(runs: string[], next: string): string {
  const breaks = (run: string) => run.split("\n").length - 1;
  const best = runs.reduce((a, b) =>
    breaks(b) > breaks(a) || (breaks(b) === breaks(a) && b.length > a.length) ? b : a,
  );
  return breaks(best) === 0 && CLOSING_PUNCTUATION.test(next) ? "" : best;
}

/** At most MAX_REPLY_LENGTH characters: cut at the last whitespace at or before it, else hard. */
function cut(text: string): string {
  if (text.length <= MAX_REPLY_LENGTH) return text;
  const head = text.slice(0, MAX_REPLY_LENGTH + 1);
  const words = head.slice(0, head.search(/\s\S*$/)).trimEnd();
  if (words !== "") return words;
  // No word boundary: a hard cut, though never inside a surrogate pair.
  const split = /[\uD800-\uDBFF]/.test(text.charAt(MAX_REPLY_LENGTH - 1));
  return text.slice(0, split ? MAX_REPLY_LENGTH - 1 : MAX_REPLY_LENGTH);
}
