import { readFileSync } from "node:fs";

/** A provider fixture (copied from ../shared/fixtures), as text and as parsed JSON. */
export function fixture(path: string): { text: string; json: Record<string, unknown> } {
  const text = readFileSync(new URL(`../fixtures/${path}`, import.meta.url), "utf8");
  return { text, json: JSON.parse(text) as Record<string, unknown> };
}

export function fixtureHeaders(path: string): Record<string, string> {
  return fixture(path).json as Record<string, string>;
}
