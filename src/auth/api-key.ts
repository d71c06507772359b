// API keys: `lg_<prefix>_<secret>`. The prefix (12 hex characters) is stored in clear to find the
// row; only a sha256 of the whole key is stored, compared in constant time. Keys are 256-bit
// random, so a slow password hash would add nothing.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** A tenant-viewer (a key or a user) only reads: GET and HEAD. */
export const ROLES = ["operator", "tenant-admin", "tenant-viewer"] as const;
export type Role = (typeof ROLES)[number];

const FORMAT = /^lg_([0-9a-f]{12})_[A-Za-z0-9_-]{43}$/;

export function generateApiKey(): string {
  return `lg_${randomBytes(6).toString("hex")}_${randomBytes(32).toString("base64url")}`;
}

/**
 * The lookup prefix of a key. A key given from outside (LEADGATE_BOOTSTRAP_OPERATOR_KEY) need not
 * follow our format: its prefix is then derived from its hash, so no part of it is stored in clear.
 */
export function prefixOf(key: string): string {
  return FORMAT.exec(key)?.[1] ?? `x${hashApiKey(key).slice(0, 15)}`;
}

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

export function apiKeyMatches(key: string, storedHash: string): boolean {
  const given = Buffer.from(hashApiKey(key), "hex");
  const stored = Buffer.from(storedHash, "hex");
  return given.length === stored.length && timingSafeEqual(given, stored);
}
