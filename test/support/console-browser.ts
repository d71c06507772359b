// Users for the browser tests, through the documented routes (api.md "Console and users"): an
// invitation made with an API key, accepted with a password, and the sign-in page filled in.
import { randomBytes } from "node:crypto";
import type { Page } from "playwright-core";
import { call } from "./admin.js";

export const PASSWORD = "correct horse battery staple";

export interface Invited {
  email: string;
  url: string;
  token: string;
}

/** POST /admin/users with `key`: the invitation's link (on PUBLIC_BASE_URL) and its token. */
export async function invite(
  base: string,
  key: string,
  role: "operator" | "tenant-admin" | "tenant-viewer",
  tenantId?: string,
): Promise<Invited> {
  const email = `${role}-${randomBytes(4).toString("hex")}@agency.test`;
  const answer = await call(base, key, "POST", "/admin/users", {
    email,
    role,
    ...(tenantId ? { tenantId } : {}),
  });
  if (answer.status !== 201) throw new Error(`invite: ${answer.status} ${answer.text}`);
  const url = answer.body.invitation.url as string;
  return { email, url, token: new URL(url).searchParams.get("token")! };
}

/** Accepts an invitation over HTTP (no browser): the user's password is PASSWORD. */
export async function accept(base: string, invited: Invited): Promise<void> {
  const answer = await fetch(`${base}/console/api/invitations/accept`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ token: invited.token, password: PASSWORD }),
  });
  if (answer.status !== 204) throw new Error(`accept: ${answer.status} ${await answer.text()}`);
}

/** Signs in on the console's page and waits for the overview. */
export async function signIn(page: Page, origin: string, email: string, password = PASSWORD): Promise<void> {
  await page.goto(`${origin}/console/sign-in`);
  await page.getByLabel("E-mail").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
}

/** A request from the signed-in page itself (its cookie), with the session's CSRF token or `csrf`. */
export async function fromPage(
  page: Page,
  method: string,
  path: string,
  csrf?: string,
): Promise<{ status: number; body: { error?: string; items?: unknown[] } }> {
  return page.evaluate(
    async ({ method, path, csrf }) => {
      const session = (await (
        await fetch("/console/api/session", { credentials: "same-origin" })
      ).json()) as {
        csrfToken: string;
      };
      const headers: Record<string, string> = { "content-type": "application/json" };
      const token = csrf ?? session.csrfToken;
      if (token) headers["x-csrf-token"] = token;
      const answer = await fetch(path, {
        method,
        headers,
        credentials: "same-origin",
        body: method === "GET" ? undefined : "{}",
      });
      const text = await answer.text();
      return {
        status: answer.status,
        body: (text ? JSON.parse(text) : {}) as { error?: string; items?: unknown[] },
      };
    },
    { method, path, csrf },
  );
}

/** Opens a screen from the navigation bar. */
export async function openScreen(page: Page, name: string): Promise<void> {
  await page.getByRole("navigation", { name: "Screens" }).getByRole("link", { name, exact: true }).click();
  await page.getByRole("heading", { name, level: 1 }).waitFor();
}
