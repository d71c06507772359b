// The console's session cookie: HttpOnly, SameSite=Lax, Secure when PUBLIC_BASE_URL is https.
import { SESSION_MAX_DAYS } from "./sessions.repository.js";

export const SESSION_COOKIE = "leadgate_session";

/** The session token of a Cookie header, if any. */
export function sessionTokenOf(cookieHeader: string | undefined): string | undefined {
  for (const part of (cookieHeader ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at > 0 && part.slice(0, at).trim() === SESSION_COOKIE) {
      const value = part.slice(at + 1).trim();
      return value.length > 0 && value.length <= 200 ? value : undefined;
    }
  }
  return undefined;
}

export function sessionCookie(token: string, publicBaseUrl: string): string {
  return attributes(`${SESSION_COOKIE}=${token}`, SESSION_MAX_DAYS * 86_400, publicBaseUrl);
}

export function clearedSessionCookie(publicBaseUrl: string): string {
  return attributes(`${SESSION_COOKIE}=`, 0, publicBaseUrl);
}

function attributes(pair: string, maxAge: number, publicBaseUrl: string): string {
  const secure = new URL(publicBaseUrl).protocol === "https:" ? "; Secure" : "";
  return `${pair}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure}`;
}
