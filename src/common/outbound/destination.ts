import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import type { CheckedDestination } from "./destination-guard.js";
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

// Kept-alive connections are pooled by host and port: a pooled socket leads to an address that
// passed the check when it was opened.
const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

/**
 * One call of a tenant-set destination (a CRM) that `DestinationGuard.check` accepted: the
 * connection goes to the checked address whatever DNS answers now, while the Host header and TLS
 * (SNI, certificate) still name the URL's host. Redirects are not followed. A 2xx resolves; anything
 * else throws a classified error, as `callDestination` does (the answer's body is not read).
 */
export function callCheckedDestination(
  target: CheckedDestination,
  init: { method: string; headers: Record<string, string>; body: string },
  timeoutMs: number,
): Promise<void> {
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };
  const secure = target.url.protocol === "https:";
  const signal = AbortSignal.timeout(timeoutMs);
  return new Promise((resolve, reject) => {
    const request = (secure ? https : http).request(
      target.url,
      {
        method: init.method,
        headers: { ...init.headers, "content-length": String(Buffer.byteLength(init.body)) },
        agent: secure ? agents.https : agents.http,
        lookup: pinned,
        signal,
      },
      (response) => {
        response.resume();
        const status = response.statusCode ?? 0;
        if (status >= 200 && status < 300) return resolve();
        const retryAfter = response.headers["retry-after"];
        reject(errorForStatus(status, typeof retryAfter === "string" ? retryAfter : null, "crm"));
      },
    );
    request.on("error", () => reject(new RetryableError(signal.aborted ? "timeout" : "network")));
    request.end(init.body);
  });
}
