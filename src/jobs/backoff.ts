// How long a retryable failure waits before the next attempt (docs/design.md, "Jobs": retries).

/**
 * Exponential backoff with jitter: base × 5^(attempt-1) (1 s, 5 s, 25 s, 2 min, ... with base 1 s),
 * capped at 1 h, ±25 % jitter; a Retry-After wins when it is longer.
 */
export function backoffDelay(
  attempt: number,
  baseMs: number,
  retryAfter?: number,
  random = Math.random,
): number {
  const exponential = Math.min(baseMs * 5 ** Math.max(0, attempt - 1), 3_600_000);
  const jittered = Math.round(exponential * (0.75 + random() * 0.5));
  return retryAfter !== undefined ? Math.max(jittered, retryAfter) : jittered;
}
