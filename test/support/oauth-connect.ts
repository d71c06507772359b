// Connecting a provider account as its owner would: the admin API starts the OAuth flow, the
// owner consents on the fake OAuth server (fake-providers.ts), and the browser follows the callback.
import type { createTenant } from "./admin.js";
import type { useFakeOAuth } from "./fake-providers.js";
import type { TestApp } from "./harness.js";

type Tenant = Awaited<ReturnType<typeof createTenant>>;

/** The test's browser: starts the flow, consents, follows the callback: the connection's id. */
export async function connectWithOAuth(
  app: TestApp,
  oauth: ReturnType<typeof useFakeOAuth>,
  tenant: Tenant,
  provider: "yelp" | "thumbtack",
  business: string,
  extra: object = {},
): Promise<string> {
  const started = await tenant.admin.post("/admin/connections/oauth", {
    provider,
    externalAccountId: business,
    displayName: `${provider} ${business}`,
    ...extra,
  });
  expect([started.status, started.text]).toEqual([201, expect.any(String)]);
  oauth.consentFor[provider] = business;
  const consent = await fetch(started.body.authorizeUrl as string, { redirect: "manual" });
  const back = new URL(consent.headers.get("location")!);
  const page = await fetch(`${app.url}${back.pathname}${back.search}`, { redirect: "manual" });
  expect(page.status).toBe(200);
  const { rows } = await app.sql.query<{ id: string }>(
    "SELECT id FROM connections WHERE external_account_id = $1 AND status <> 'disabled'",
    [business],
  );
  return rows[0]!.id;
}
