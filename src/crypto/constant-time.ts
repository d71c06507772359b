import { hash, timingSafeEqual } from "node:crypto";

/**
 * Compares two secrets in constant time. Both sides are hashed first, so neither the content nor
 * the length of the expected value leaks through timing.
 */
export function secretsEqual(given: string | undefined, expected: string): boolean {
  const a = hash("sha256", given ?? "", "buffer");
  const b = hash("sha256", expected, "buffer");
  return timingSafeEqual(a, b) && given !== undefined;
}

/** True when `authorization` is `Bearer <token>` (constant-time comparison). */
export function bearerMatches(authorization: string | undefined, token: string): boolean {
  return secretsEqual(/^Bearer (.+)$/.exec(authorization ?? "")?.[1], token);
}
