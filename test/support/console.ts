// Console users as a browser signs them in: invitation accepted, POST /console/api/session, then the
// session cookie (and its CSRF token on changes) on every request.
import { randomBytes } from "node:crypto";
import { type AdminAnswer, OPERATOR_KEY, adminAs } from "./admin.js";

export const PASSWORD = "correct horse battery staple";

export function uniqueEmail(name = "user"): string {
  return `${name}-${randomBytes(4).toString("hex")}@example.com`;
}

/** Calls a route with a session cookie (and `X-CSRF-Token` when `csrf` is given), as the console does. */
export async function callWithCookie(
  baseUrl: string,
  cookie: string,
  method: string,
  path: string,
  options: { csrf?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<AdminAnswer> {
  const headers: Record<string, string> = { cookie, ...options.headers };
  if (options.csrf !== undefined) headers["x-csrf-token"] = options.csrf;
  if (options.body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await response.text();
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.status, body, text, headers: response.headers };
}

/** POST /console/api/session from `ip` (X-Forwarded-For: the test API trusts 127.0.0.1 as a proxy). */
export async function signIn(baseUrl: string, email: string, password: string, ip = "203.0.113.1") {
  const started = performance.now();
  const response = await fetch(`${baseUrl}/console/api/session`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": ip },
    body: JSON.stringify({ email, password }),
  });
  const ms = performance.now() - started;
  const text = await response.text();
  const setCookie = response.headers.get("set-cookie");
  return {
    status: response.status,
    text,
    body: text ? JSON.parse(text) : undefined,
    setCookie,
    cookie: setCookie?.split(";")[0],
    ms,
  };
}

export async function acceptInvitation(baseUrl: string, url: string, password: string) {
  const token = new URL(url).searchParams.get("token");
  const response = await fetch(`${baseUrl}/console/api/invitations/accept`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token, password }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : undefined };
}

/**
 * A signed-in user: invited by `inviter` (default the bootstrap operator key), invitation
 * accepted, signed in. Answers its id, cookie and CSRF token, and a client sending them.
 */
export async function signedInUser(
  baseUrl: string,
  input: { role: string; tenantId?: string; email?: string },
  inviter = adminAs(baseUrl, OPERATOR_KEY),
) {
  const email = input.email ?? uniqueEmail(input.role);
  const created = await inviter.post("/admin/users", { email, role: input.role, tenantId: input.tenantId });
  if (created.status !== 201) throw new Error(`user not created: ${created.status} ${created.text}`);
  const accepted = await acceptInvitation(baseUrl, created.body.invitation.url as string, PASSWORD);
  if (accepted.status !== 204) throw new Error(`invitation not accepted: ${accepted.status}`);
  const session = await signIn(baseUrl, email, PASSWORD, `198.51.100.${1 + Math.floor(Math.random() * 250)}`);
  if (session.status !== 200) throw new Error(`not signed in: ${session.status} ${session.text}`);
  const cookie = session.cookie!;
  const csrf = session.body.csrfToken as string;
  return {
    id: created.body.user.id as string,
    email,
    cookie,
    csrf,
    get: (path: string) => callWithCookie(baseUrl, cookie, "GET", path),
    post: (path: string, body?: unknown) => callWithCookie(baseUrl, cookie, "POST", path, { csrf, body }),
    delete: (path: string) => callWithCookie(baseUrl, cookie, "DELETE", path, { csrf }),
  };
}
