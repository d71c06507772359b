// How an outbound call (or any side effect) failed decides what happens next (docs/design.md, "Jobs").
// Here, below providers and jobs, so provider clients and processors classify alike.

/**
 * Worth retrying: network, timeout, 5xx, 429, a provider answer of the wrong shape
 * (`provider_bad_response`). `retryAfterMs` honours the destination's Retry-After.
 */
export class RetryableError extends Error {
  constructor(
    readonly code: string,
    readonly retryAfterMs?: number,
  ) {
    super(code);
  }
}

/** Will never succeed as is (4xx validation, unsupported data): straight to `dead`. */
export class PermanentError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

/** The provider refused our credentials (401/403): connection → credential_error, job → blocked. */
export class CredentialError extends Error {
  constructor(readonly code: string) {
    super(code);
  }
}

export type FailureClass = "retryable" | "permanent" | "credential";

export function classify(error: unknown): { kind: FailureClass; code: string; retryAfterMs?: number } {
  if (error instanceof PermanentError) return { kind: "permanent", code: error.code };
  if (error instanceof CredentialError) return { kind: "credential", code: error.code };
  if (error instanceof RetryableError)
    return { kind: "retryable", code: error.code, retryAfterMs: error.retryAfterMs };
  return { kind: "retryable", code: "internal_error" };
}

/** Retry-After as seconds or an HTTP date, in ms (undefined when absent or unreadable). */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * Classifies an HTTP answer of a destination. Provider APIs' 401/403 are credential problems;
 * for an agency's CRM they are permanent (its configuration must change).
 */
export function errorForStatus(
  status: number,
  retryAfter: string | null,
  destination: "provider" | "crm",
): Error {
  if (status === 429 || status === 408 || status >= 500) {
    return new RetryableError(`http_${status}`, retryAfterMs(retryAfter));
  }
  if ((status === 401 || status === 403) && destination === "provider")
    return new CredentialError(`http_${status}`);
  return new PermanentError(`http_${status}`);
}

/**
 * Not a failure: the job may not run yet (a provider's quota or Retry-After, an open circuit, a first
 * reply's delay). It waits (`waiting`, `reason`) until `retryAt`, using no attempt, bounded by
 * JOB_MAX_WAIT_SECONDS.
 */
export class WaitRequired extends Error {
  constructor(
    readonly reason: "quota" | "circuit" | "delay",
    readonly retryAt: Date,
  ) {
    super(`waiting for ${reason}`);
  }
}
