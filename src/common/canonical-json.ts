import { hash } from "node:crypto";

/**
 * JSON with object keys sorted at every depth: equal values give equal text. Exactly the text of
 * `JSON.stringify` with each object's keys put in sorted order (so integer-like keys still come
 * first, in numeric order, as in any JS object).
 *
 * Plain data (what JSON.parse gives: plain objects, arrays, strings, numbers, booleans, null) is
 * written by `JSON.stringify` itself, with a sorted copy only of the objects whose keys are out of
 * order: one flat string, half the time and allocation of writing it piece by piece. Anything else
 * (a `toJSON`, a boxed primitive, a class instance, a function, a bigint, a `__proto__` key) is
 * written piece by piece below. Plain data's values are read more than once (to sort, then to
 * write): a getter that answers differently from one read to the next may be written with either
 * answer. JSON.parse makes no getters.
 */
export function canonicalJson(value: unknown): string {
  const data = sortedData(value);
  return data === NOT_PLAIN ? (serialize(value, "") as string) : JSON.stringify(data);
}

export function sha256Hex(text: string): string {
  return hash("sha256", text, "hex");
}

const NOT_PLAIN = Symbol("not plain data");

/**
 * `value` with every object whose keys are out of sorted order replaced by a sorted copy (the
 * value itself when all are in order), or NOT_PLAIN. Keys count as in order when each is greater
 * than the one before and none starts with a digit: then no key is an integer-like one (which a
 * copy would move first), whatever lists the keys (a proxy may list them in any order).
 */
function sortedData(value: unknown): unknown {
  if (typeof value !== "object" || value === null) {
    return typeof value === "bigint" || typeof value === "function" ? NOT_PLAIN : value;
  }
  if (typeof (value as ToJson).toJSON === "function") return NOT_PLAIN; // an array's too
  if (Array.isArray(value)) {
    let copy: unknown[] | undefined;
    for (let index = 0; index < value.length; index++) {
      const item: unknown = value[index];
      const data = sortedData(item);
      if (data === NOT_PLAIN) return NOT_PLAIN;
      if (data !== item && copy === undefined) copy = value.slice(0, index);
      copy?.push(data);
    }
    return copy ?? value;
  }
  if (Object.getPrototypeOf(value) !== Object.prototype) return NOT_PLAIN;
  const object = value as Record<string, unknown>;
  const keys = Object.keys(object);
  let ordered = true;
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!;
    if (key === "__proto__") return NOT_PLAIN; // a copy would take it for the prototype
    const first = key.charCodeAt(0);
    if ((first >= 48 && first <= 57) || (index > 0 && !(keys[index - 1]! < key))) ordered = false;
  }
  if (!ordered) sortKeys(keys);
  let copy: Record<string, unknown> | undefined = ordered ? undefined : {};
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!;
    const item = object[key];
    const data = sortedData(item);
    if (data === NOT_PLAIN) return NOT_PLAIN;
    if (data !== item && copy === undefined) {
      copy = {};
      for (let before = 0; before < index; before++) copy[keys[before]!] = object[keys[before]!];
    }
    if (copy !== undefined) copy[key] = data;
  }
  return copy ?? value;
}

/**
 * `keys` sorted in place by UTF-16 code unit, as `Array.prototype.sort` would: short lists (most
 * objects) by insertion, without the working copy `sort` allocates for every call.
 */
function sortKeys(keys: string[]): void {
  if (keys.length > 16) {
    keys.sort();
    return;
  }
  for (let index = 1; index < keys.length; index++) {
    const key = keys[index]!;
    let at = index;
    for (; at > 0 && keys[at - 1]! > key; at--) keys[at] = keys[at - 1]!;
    keys[at] = key;
  }
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
