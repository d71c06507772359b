// Login CSRF (a hostile page's form signing a victim's browser into the attacker's account): the
// sign-in and the invitation's acceptance are refused when the browser says the request comes from
// another site (`Sec-Fetch-Site`), or its `Origin` is not Leadgate's own: PUBLIC_BASE_URL's, or the
// host the request was sent to (its `Host`, as OWASP's same-origin check: an operator who reaches the
// API by another name than PUBLIC_BASE_URL's is on Leadgate's page all the same). A client that sends
// neither header (curl, a server) is not a browser on a hostile page and passes.
import { AppError } from "../common/app-error.js";

export function refuseCrossSite(
  headers: Record<string, string | string[] | undefined>,
  publicBaseUrl: string,
): void {
  const site = headers["sec-fetch-site"];
  const origin = headers.origin;
  const foreignSite = typeof site === "string" && (site === "cross-site" || site === "same-site");
  const foreignOrigin =
    typeof origin === "string" &&
    origin !== new URL(publicBaseUrl).origin &&
    (headers.host === undefined || hostOf(origin) !== headers.host);
  if (foreignSite || foreignOrigin) {
    throw new AppError(
      403,
      "cross_site_request",
      "Signing in must come from Leadgate's own pages (this request came from another site).",
    );
  }
}

/** The `host[:port]` of an origin; undefined for `null` or anything that is not a URL. */
function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}
