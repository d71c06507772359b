import { errorForStatus, RetryableError } from "./errors.js";

/**
 * One HTTP call of a side effect. A 2xx returns the response; anything else throws a classified
 * error. A timeout or a broken connection is an *unknown* outcome (`RetryableError` "timeout" /
 * "network"): the call may have taken effect, so callers reconcile before repeating it.
 */
export async function callDestination(
  url: string,
  init: RequestInit,
  timeoutMs: number,
  destination: "provider" | "crm",
): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs), redirect: "manual" });
  } catch (error) {
    throw transportError(error);
  }
  if (response.status >= 200 && response.status < 300) return response;
  await response.body?.cancel();
  throw errorForStatus(response.status, response.headers.get("retry-after"), destination);
}

/** A call (or the read of its answer) that broke off: timed out, or the connection failed. */
export function transportError(error: unknown): RetryableError {
  const timedOut =
    error instanceof DOMException && (error.name === "TimeoutError" || error.name === "AbortError");
  return new RetryableError(timedOut ? "timeout" : "network");
}
