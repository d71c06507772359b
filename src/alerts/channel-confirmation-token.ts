// The token of an email channel's confirmation link: `<channel id>.<secret>`, the secret 32 random
// bytes (base64url). Only its sha256 is stored. The channel id finds the row; the hashes are then
// compared in constant time, so neither a lookup nor a comparison tells how close a guess was.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** How long a mailed link works. */
export const CONFIRMATION_DAYS = 7;

const TOKEN = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.([A-Za-z0-9_-]{43})$/;

export interface ConfirmationToken {
  /** Mailed in the link, never stored. */
  token: string;
  /** sha256 of the token (hex): what the channel's row keeps. */
  hash: string;
}

export function newConfirmationToken(channelId: string): ConfirmationToken {
  const token = `${channelId}.${randomBytes(32).toString("base64url")}`;
  return { token, hash: hashOf(token) };
}

/** The channel a well-formed token names, and the token's hash; undefined for anything else. */
export function readConfirmationToken(token: unknown): { channelId: string; hash: string } | undefined {
  if (typeof token !== "string") return undefined;
  const match = TOKEN.exec(token);
  return match ? { channelId: match[1]!, hash: hashOf(token) } : undefined;
}

/** Constant-time comparison of two hex sha256 hashes. */
export function sameHash(given: string, stored: string): boolean {
  const [a, b] = [Buffer.from(given, "hex"), Buffer.from(stored, "hex")];
  return a.length === 32 && b.length === 32 && timingSafeEqual(a, b);
}

function hashOf(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}
