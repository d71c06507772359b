// Small readers for untrusted JSON: every field is checked before use; a wrong shape is a 400.
import { AppError } from "../common/app-error.js";
import type { JsonObject } from "./provider-event.js";

const MAX_ID_LENGTH = 256;

export const invalidEnvelope = (message: string): AppError => new AppError(400, "invalid_envelope", message);

export function isObject(value: unknown): value is JsonObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

export function requireObject(value: unknown, what: string): JsonObject {
  if (!isObject(value)) throw invalidEnvelope(`${what} must be a JSON object.`);
  return value;
}

/** An optional string field (wrong type: 400). */
export function optionalString(object: JsonObject, field: string, what = field): string | undefined {
  const value = object[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw invalidEnvelope(`${what} must be a string.`);
  return value;
}

/** A required provider id: a non-empty string, or an integer (Thumbtack int64 ids arrive as either). */
export function requireId(object: JsonObject, field: string, what = field): string {
  const value = object[field];
  const id = typeof value === "number" && Number.isSafeInteger(value) ? String(value) : value;
  if (typeof id !== "string" || id.trim() === "" || id.length > MAX_ID_LENGTH) {
    throw invalidEnvelope(`${what} must be a non-empty id (at most ${MAX_ID_LENGTH} characters).`);
  }
  return id;
}

/**
 * A provider id that becomes a segment of a provider API path (a Yelp lead id, a Thumbtack
 * negotiation id): besides `requireId`, never `.` or `..` and without `/` or `\`, which would make
 * the tenant's token call another provider URL.
 */
export function requirePathId(object: JsonObject, field: string, what = field): string {
  const id = requireId(object, field, what);
  if (id === "." || id === ".." || /[/\\]/.test(id)) {
    throw invalidEnvelope(`${what} must not be "." or ".." nor contain "/" or "\\".`);
  }
  return id;
}

/** Lenient reading for the worker's lead rules: a non-empty string, trimmed; anything else is undefined. */
export function trimmedText(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/** An object, or `{}` for anything else. */
/** The first word of a name ("Marta K." ⇒ "Marta"), for the first reply's `{{lead.firstName}}`. */
export function firstWord(name: string | undefined): string | undefined {
  return name?.split(/\s+/)[0] || undefined;
}

export function objectOrEmpty(value: unknown): JsonObject {
  return isObject(value) ? value : {};
}

/**
 * A timestamp (ISO 8601 text, or unix seconds as number or digit string); undefined when absent,
 * unreadable, or outside the years 1970 to 9999 (a milliseconds value sent as seconds, say).
 */
export function parseTime(value: unknown): Date | undefined {
  let date: Date;
  if (typeof value === "number" && Number.isFinite(value)) date = new Date(value * 1000);
  else if (typeof value === "string" && value !== "") {
    date = /^\d{9,11}$/.test(value) ? new Date(Number(value) * 1000) : new Date(value);
  } else return undefined;
  const year = date.getUTCFullYear();
  return Number.isNaN(date.getTime()) || year < 1970 || year > 9999 ? undefined : date;
}

/** The first readable time among the candidates, else the moment of receipt. */
export function firstTime(...candidates: unknown[]): Date {
  for (const candidate of candidates) {
    const time = parseTime(candidate);
    if (time) return time;
  }
  return new Date();
}
