import { hash } from "node:crypto";

/**
 * JSON with object keys sorted at every depth: equal values give equal text. Exactly the text of
 * `JSON.stringify` with each object's keys put in sorted order (so integer-like keys still come
 * first, in numeric order, as in any JS object), written directly: no sorted copy of each object.
 */
export function canonicalJson(value: unknown): string {
  return serialize(value, "") as string;
}

export function sha256Hex(text: string): string {
  return hash("sha256", text, "hex");
}

/** `value` as JSON.stringify writes it under `key` (undefined: left out, as JSON.stringify leaves it). */
function serialize(value: unknown, key: string): string | undefined {
  if (
    ((value !== null && typeof value === "object") || typeof value === "bigint") &&
    typeof (value as ToJson).toJSON === "function"
  ) {
    value = (value as ToJson).toJSON(key);
  }
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
      return Number.isFinite(value) ? String(value) : "null";
    case "boolean":
      return value ? "true" : "false";
    case "bigint":
      return JSON.stringify(value); // throws, as JSON.stringify does
    case "object":
      if (value === null) return "null";
      return Array.isArray(value) ? serializeArray(value) : serializeObject(value as Record<string, unknown>);
    case "undefined":
    case "function":
    case "symbol":
      return undefined; // left out, as JSON.stringify leaves them
  }
}

function serializeArray(items: unknown[]): string {
  let text = "[";
  for (let index = 0; index < items.length; index++) {
    if (index > 0) text += ",";
    text += serialize(items[index], String(index)) ?? "null";
  }
  return text + "]";
}

function serializeObject(object: Record<string, unknown>): string {
  let text = "{";
  let first = true;
  for (const key of sortedKeys(object)) {
    const item = serialize(object[key], key);
    if (item === undefined) continue;
    text += `${first ? "" : ","}${JSON.stringify(key)}:${item}`;
    first = false;
  }
  return text + "}";
}

/**
 * The own keys in the order a JS object holds them once inserted sorted: array indices first, in
 * numeric order, then the other keys sorted by UTF-16 code unit.
 */
function sortedKeys(object: object): string[] {
  const indices: string[] = [];
  const names: string[] = [];
  for (const key of Object.keys(object)) (isArrayIndex(key) ? indices : names).push(key);
  names.sort();
  return indices.length === 0 ? names : indices.sort((a, b) => Number(a) - Number(b)).concat(names);
}

/** A canonical array index (0 … 2^32 − 2), which objects order numerically before other keys. */
function isArrayIndex(key: string): boolean {
  return /^(?:0|[1-9]\d{0,9})$/.test(key) && Number(key) <= 4_294_967_294;
}

interface ToJson {
  toJSON(key: string): unknown;
}
