// The console's session cookie: HttpOnly, SameSite=Lax, Path=/. Behind an https PUBLIC_BASE_URL it
// is Secure and named with the `__Host-` prefix, which browsers accept only from a secure origin,
// without a Domain and for Path=/: a sibling subdomain (or a man in the middle on http) cannot set
// or overwrite it, so no one can plant a session of their own in a user's browser. Only that name
// is read then: a cookie under the plain name could have been planted.
import { SESSION_MAX_DAYS } from "./sessions.repository.js";

const NAME = "leadgate_session";

/** The cookie's name for a PUBLIC_BASE_URL: `__Host-leadgate_session` on https, else `leadgate_session`. */
export function sessionCookieName(publicBaseUrl: string): string {
  return isHttps(publicBaseUrl) ? `__Host-${NAME}` : NAME;
}

/** The session token a Cookie header carries under `name`, if any. */
export function sessionTokenOf(cookieHeader: string | undefined, name: string): string | undefined {
  for (const part of (cookieHeader ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === name) {
      const value = part.slice(at + 1).trim();
      return value.length > 0 && value.length <= 200 ? value : undefined;
    }
  }
  return undefined;
}

export function sessionCookie(token: string, publicBaseUrl: string): string {
  return attributes(token, SESSION_MAX_DAYS * 86_400, publicBaseUrl);
}

export function clearedSessionCookie(publicBaseUrl: string): string {
  return attributes("", 0, publicBaseUrl);
}

function attributes(value: string, maxAge: number, publicBaseUrl: string): string {
  const secure = isHttps(publicBaseUrl) ? "; Secure" : "";
  return `${sessionCookieName(publicBaseUrl)}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`;
}

function isHttps(publicBaseUrl: string): boolean {
  return new URL(publicBaseUrl).protocol === "https:";
}
