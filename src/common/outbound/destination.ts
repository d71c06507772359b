import { CredentialError, errorForStatus, RetryableError } from "./errors.js";

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
    const timedOut =
      error instanceof DOMException && (error.name === "TimeoutError" || error.name === "AbortError");
    throw new RetryableError(timedOut ? "timeout" : "network");
  }
  if (response.status >= 200 && response.status < 300) return response;
  await response.body?.cancel();
  throw errorForStatus(response.status, response.headers.get("retry-after"), destination);
}

/**
 * A JSON call to a provider API with the connection's OAuth token. No token is a credential
 * problem (the connection needs one); the answer's JSON body is returned ({} when empty).
 */
export async function callProviderApi<T>(
  url: string,
  method: string,
  token: string | undefined,
  timeoutMs: number,
  body?: unknown,
): Promise<T> {
  if (!token) throw new CredentialError("no_credentials");
  const response = await callDestination(
    url,
    {
      method,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    },
    timeoutMs,
    "provider",
  );
  const text = await response.text();
  return (text ? JSON.parse(text) : {}) as T;
}
