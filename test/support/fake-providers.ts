// Stateful fakes of what provider registration talks to: an OAuth authorization server
// that grants whatever business the owner consents to, Thumbtack's business webhooks and Yelp's
// subscriptions and self-serve webhooks, each kept in memory as the provider would. Real HTTP
// servers on loopback (useFakeServer); a test flips `down` to make one answer 500.
import type { createTenant } from "./admin.js";
import type { FakeReply, FakeServer, ReceivedRequest } from "./fake-server.js";
import { type TestApp, useFakeServer } from "./harness.js";
import { FakeAuthorizationServer, type OAuthProviderName, oauthClientEnv, refusal } from "./oauth-server.js";

const json = (request: ReceivedRequest): Record<string, unknown> =>
  request.body ? (JSON.parse(request.body) as Record<string, unknown>) : {};

/**
 * An OAuth server at `/{provider}/authorize|token|revoke`, strict as the providers are
 * (oauth-server.ts: client authentication, redirect_uri, PKCE): each token reaches the consented
 * business. `authorization.presented` lists the client credentials each token and revoke request carried.
 */
export function useFakeOAuth() {
  /** The business the next consent grants, per provider. */
  const consentFor: Record<string, string> = {};
  /** Businesses each access token reaches. */
  const reach = new Map<string, string>();
  const authorization = new FakeAuthorizationServer<string>();
  let issued = 0;
  const server = useFakeServer({ status: 404, body: {} }, (request) => {
    const url = new URL(request.path, "http://fake");
    const authorize = /^\/(yelp|thumbtack)\/authorize$/.exec(url.pathname);
    if (authorize && request.method === "GET") {
      const provider = authorize[1] as OAuthProviderName;
      return authorization.authorize(provider, url, consentFor[provider]);
    }
    const endpoint = /^\/(yelp|thumbtack)\/(token|revoke)$/.exec(url.pathname);
    if (!endpoint || request.method !== "POST") return undefined;
    const provider = endpoint[1] as OAuthProviderName;
    const refused = authorization.checkClient(provider, request);
    if (refused) return refused;
    if (endpoint[2] === "revoke") return { status: 200, body: {} };
    const form = new URLSearchParams(request.body);
    if (form.get("grant_type") !== "authorization_code") {
      return refusal(provider, "invalid_grant", "this fake issues no refresh tokens that work");
    }
    const redeemed = authorization.redeem(provider, form);
    if ("refused" in redeemed) return redeemed.refused;
    const accessToken = `${provider}-access-${++issued}`;
    reach.set(accessToken, redeemed.grant);
    return {
      status: 200,
      body: {
        access_token: accessToken,
        token_type: "Bearer",
        expires_in: 3600,
        refresh_token: `${accessToken}-refresh`,
      },
    };
  });
  const env = () => oauthClientEnv(server.url);
  /** Whether the request's Bearer token reaches `business`. */
  const reaches = (request: ReceivedRequest, business: string) =>
    reach.get((request.headers.authorization ?? "").replace(/^Bearer /, "")) === business;
  return { server, consentFor, env, reaches, authorization };
}

/** A webhook as the fake Thumbtack keeps it. */
export interface ThumbtackHook {
  webhookID: string;
  webhookURL: string;
  eventTypes: string[];
  enabled: boolean;
  auth?: { username: string; password: string };
}

/** Thumbtack's business webhooks ([DOCS T1] create; list, update, delete as providers.md assumes). */
export function useFakeThumbtack(reaches: (request: ReceivedRequest, business: string) => boolean) {
  /** Webhooks by business, then by id. */
  const hooks = new Map<string, Map<string, ThumbtackHook>>();
  /**
   * `down`: writes answer 500; `forbidden`: writes answer 403 (a grant without the webhook scope);
   * `negotiations`: what a business's negotiations list (reconciliation's read) answers, else 404.
   */
  const state: { down: boolean; forbidden: boolean; next: number; negotiations?: FakeReply } = {
    down: false,
    forbidden: false,
    next: 7000,
  };
  const of = (business: string) => hooks.get(business) ?? hooks.set(business, new Map()).get(business)!;
  const server = useFakeServer({ status: 404, body: {} }, (request): FakeReply | undefined => {
    const url = new URL(request.path, "http://fake");
    // A negotiation's messages (the auto-reply reads them, then sends): none yet, and sent.
    if (/^\/api\/v4\/negotiations\/[^/]+\/messages$/.test(url.pathname)) {
      return request.method === "GET" ? { status: 200, body: { messages: [] } } : { status: 201, body: {} };
    }
    if (state.negotiations && /^\/api\/v4\/businesses\/[^/]+\/negotiations$/.test(url.pathname)) {
      return state.negotiations;
    }
    const list = /^\/api\/v4\/businesses\/([^/]+)\/webhooks$/.exec(url.pathname);
    const item = /^\/api\/v4\/businesses\/([^/]+)\/webhooks\/([^/]+)$/.exec(url.pathname);
    const business = decodeURIComponent((list ?? item)?.[1] ?? "");
    if (!list && !item) return undefined;
    if (!reaches(request, business)) return { status: 403, body: {} };
    // Down: writes fail (the read that proves a grant reaches the business still answers).
    if (state.down && request.method !== "GET") return { status: 500, text: "upstream broke" };
    if (state.forbidden && request.method !== "GET") return { status: 403, body: {} };
    if (list && request.method === "GET") return { status: 200, body: { data: [...of(business).values()] } };
    if (list && request.method === "POST") {
      const body = json(request) as Omit<ThumbtackHook, "webhookID">;
      const hook = { ...body, webhookID: String(++state.next) };
      of(business).set(hook.webhookID, hook);
      return { status: 201, body: { ...hook, auth: undefined, authType: body.auth ? "Basic" : "None" } };
    }
    const id = decodeURIComponent(item?.[2] ?? "");
    const existing = of(business).get(id);
    if (!existing) return { status: 404, body: {} };
    if (request.method === "PUT") {
      of(business).set(id, { ...(json(request) as Omit<ThumbtackHook, "webhookID">), webhookID: id });
      return { status: 200, body: {} };
    }
    if (request.method === "DELETE") {
      of(business).delete(id);
      return { status: 204 };
    }
    return undefined;
  });
  return {
    server,
    hooks: (business: string) => [...of(business).values()],
    /** A webhook made on Thumbtack's side (by hand, or by another integration). */
    add: (business: string, hook: ThumbtackHook) => of(business).set(hook.webhookID, hook),
    state,
  };
}

/** A self-serve webhook as the fake Yelp keeps it. */
export interface YelpHook {
  webhook_id: string;
  webhook_url: string;
  restricted_business_ids: string[];
  expiration_date: string;
}

/** Yelp's Business Subscriptions API and self-serve webhooks, plus the lead-id read that proves access. */
export function useFakeYelp(reaches: (request: ReceivedRequest, business: string) => boolean) {
  const subscribed = new Set<string>();
  const hooks = new Map<string, YelpHook>();
  const state = { down: false, next: 100 };
  const server = useFakeServer({ status: 404, body: {} }, (request): FakeReply | undefined => {
    const url = new URL(request.path, "http://fake");
    const leadIds = /^\/v3\/businesses\/([^/]+)\/lead_ids$/.exec(url.pathname);
    if (leadIds) {
      return reaches(request, decodeURIComponent(leadIds[1]!))
        ? { status: 200, body: { lead_ids: [], has_more: false } }
        : { status: 403, body: {} };
    }
    if (state.down) return { status: 500, text: "upstream broke" };
    if (url.pathname === "/v3/businesses/subscriptions") {
      if (request.method === "GET") {
        return {
          status: 200,
          body: {
            subscriptions: [...subscribed].map((id) => ({
              business_id: id,
              subscription_types: ["WEBHOOK"],
            })),
          },
        };
      }
      const ids = (json(request).business_ids as string[]) ?? [];
      for (const id of ids) {
        if (request.method === "POST") subscribed.add(id);
        if (request.method === "DELETE") subscribed.delete(id);
      }
      return { status: request.method === "POST" ? 201 : 200, body: {} };
    }
    if (url.pathname === "/v3/webhooks" && request.method === "POST") {
      const body = json(request);
      const hook: YelpHook = {
        webhook_id: `wh_${++state.next}`,
        webhook_url: body.webhook_url as string,
        restricted_business_ids: body.restricted_business_ids as string[],
        expiration_date: new Date(Date.now() + 14 * 86_400_000).toISOString(),
      };
      hooks.set(hook.webhook_id, hook);
      return { status: 201, body: hook };
    }
    const hook = /^\/v3\/webhooks\/([^/]+)$/.exec(url.pathname);
    if (hook && request.method === "DELETE") {
      return hooks.delete(decodeURIComponent(hook[1]!)) ? { status: 204 } : { status: 404, body: {} };
    }
    return undefined;
  });
  return { server, subscribed, hooks, state };
}

/** The servers a test file's app points at, for the env of `useApp`. */
export const providerEnv = (yelp: FakeServer, thumbtack: FakeServer) => ({
  YELP_API_BASE_URL: yelp.url,
  THUMBTACK_API_BASE_URL: thumbtack.url,
});

/**
 * The owner's browser: starts the OAuth flow as `tenant`, lets `oauth` consent to `business`,
 * follows the callback to the app; answers the connection's id.
 */
export async function connectWithOAuth(
  app: TestApp,
  oauth: ReturnType<typeof useFakeOAuth>,
  tenant: Awaited<ReturnType<typeof createTenant>>,
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
