import { hash } from "node:crypto";

/**
 * JSON with object keys sorted at every depth: equal values give equal text. (Keys copied into a
 * fresh object in sorted order: integer-like keys still come first, as in any JS object.)
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (item === null || typeof item !== "object" || Array.isArray(item)) return item;
    // No prototype: a `__proto__` key is kept as a key, not taken as the object's prototype.
    const sorted = Object.create(null) as Record<string, unknown>;
    for (const key of Object.keys(item).sort()) sorted[key] = (item as Record<string, unknown>)[key];
    return sorted;
  });
}

export function sha256Hex(text: string): string {
  return hash("sha256", text, "hex");
}
