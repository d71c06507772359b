// Connecting Yelp and Thumbtack accounts with OAuth (api.md "Connecting provider accounts"), end to
// end: the admin API starts the flow, the test's "browser" follows the fake authorization server's
// redirect back to the callback, the fake token endpoint issues tokens, the fake provider APIs say
// which businesses a token reaches, and a delivery's auto-reply goes out with the granted token.
// The authorization server is as strict as the providers (test/support/oauth-server.ts): the
// client's id and secret, as each provider takes them, redirect_uri and PKCE are checked.
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { fixture } from "../support/fixtures.js";
import type { ReceivedRequest } from "../support/fake-server.js";
import { useApp, useFakeServer } from "../support/harness.js";
import {
  FakeAuthorizationServer,
  type OAuthProviderName,
  oauthClientEnv,
  refusal,
} from "../support/oauth-server.js";
import { post } from "../support/http.js";
import { waitFor } from "../support/wait.js";
import { TokenRefreshSweep } from "../../src/connections/token-refresh-sweep.js";

const YELP_TOKEN = "yelp-platform-token-0123456789";
const REPLY = "Thanks for reaching out! We will call you within the hour.";
const RETURN_ORIGIN = "https://app.agency.example";
/** How each client authenticates at its provider's token and revoke endpoints (providers.md). */
const YELP_CLIENT = { via: "post", clientId: "leadgate-yelp", clientSecret: "yelp-client-secret-0123456789" };
const THUMBTACK_CLIENT = {
  via: "basic",
  clientId: "leadgate-thumbtack",
  clientSecret: "thumbtack-client-secret-0123456789",
};

describe("OAuth: connecting provider accounts", () => {
  /** Businesses each access token reaches (the fake provider APIs answer 403 for any other). */
  const reach = new Map<string, string[]>();
  /** Business id the next consent grants access to (the owner's account), per provider. */
  const consentFor: Record<string, string> = {};
  /** The strict authorization server (client authentication, redirect_uri, PKCE); a code's grant is its access token. */
  const authorization = new FakeAuthorizationServer<string>();
  /** The token endpoint's answer overrides: "fail" (500), "garbage" (200, not a token). */
  let tokenEndpoint: "ok" | "fail" | "garbage" = "ok";
  let issued = 0;
  /** Lifetime of the access tokens the fake issues (seconds), and when each one expires. */
  let accessLifetime = 3600;
  const expiry = new Map<string, number>();
  /** Live refresh tokens → the access token of the grant they belong to (for reach). */
  const liveRefresh = new Map<string, string>();
  /** Every refresh token the token endpoint was shown, in order. */
  const refreshesPresented: string[] = [];

  /** The client credentials the requests to `path` carried (those the fake's route saw), in order. */
  const presentedAt = (path: string) =>
    authorization.presented
      .filter((request) => request.path === path)
      .map(({ via, clientId, clientSecret }) => ({ via, clientId, clientSecret }));

  const auth = useFakeServer({ status: 404, body: {} }, (request) => {
    const url = new URL(request.path, "http://fake");
    const authorize = /^\/(yelp|thumbtack)\/authorize$/.exec(url.pathname);
    if (authorize && request.method === "GET") {
      const provider = authorize[1] as OAuthProviderName;
      if (consentFor[provider] === "deny") return authorization.authorize(provider, url, undefined);
      const accessToken = `${provider}-access-${++issued}`;
      reach.set(accessToken, [consentFor[provider]!]);
      return authorization.authorize(provider, url, accessToken);
    }
    if (url.pathname === "/thumbtack/revoke" && request.method === "POST") {
      return authorization.checkClient("thumbtack", request) ?? { status: 200, body: {} };
    }
    const token = /^\/(yelp|thumbtack)\/token$/.exec(url.pathname);
    if (token && request.method === "POST") {
      if (tokenEndpoint === "fail") return { status: 500, text: "upstream broke" };
      if (tokenEndpoint === "garbage") return { status: 200, text: "<html>not a token</html>" };
      const provider = token[1] as OAuthProviderName;
      const refused = authorization.checkClient(provider, request);
      if (refused) return refused;
      const form = new URLSearchParams(request.body);
      if (form.get("grant_type") === "refresh_token") {
        // Single-use refresh tokens: a second use (or a revoked one) is invalid_grant.
        const presented = form.get("refresh_token") ?? "";
        refreshesPresented.push(presented);
        const first = liveRefresh.get(presented);
        if (first === undefined) return refusal(provider, "invalid_grant", "refresh token is invalid");
        liveRefresh.delete(presented);
        const accessToken = `${first}-r${refreshesPresented.length}`;
        reach.set(accessToken, reach.get(first) ?? []);
        liveRefresh.set(`${accessToken}-refresh`, first);
        expiry.set(accessToken, Date.now() + accessLifetime * 1000);
        return {
          status: 200,
          // Slow, as a real token endpoint can be: every job that needs the token meanwhile must wait.
          delayMs: 300,
          body: {
            access_token: accessToken,
            token_type: "Bearer",
            expires_in: accessLifetime,
            refresh_token: `${accessToken}-refresh`,
          },
        };
      }
      const redeemed = authorization.redeem(provider, form);
      if ("refused" in redeemed) return redeemed.refused;
      const accessToken = redeemed.grant;
      liveRefresh.set(`${accessToken}-refresh`, accessToken);
      expiry.set(accessToken, Date.now() + accessLifetime * 1000);
      return {
        status: 200,
        body: {
          access_token: accessToken,
          token_type: "Bearer",
          expires_in: accessLifetime,
          refresh_token: `${accessToken}-refresh`,
          scope: provider === "yelp" ? "leads" : "offline_access supply::messages",
        },
      };
    }
    return undefined;
  });

  const bearerOf = (request: ReceivedRequest) =>
    (request.headers.authorization ?? "").replace(/^Bearer /, "");
  const reaches = (request: ReceivedRequest, business: string) =>
    (reach.get(bearerOf(request)) ?? []).includes(business);
  const yelp = useFakeServer({ status: 201, body: {} }, (request) => {
    const url = new URL(request.path, "http://fake");
    const leadIds = /^\/v3\/businesses\/([^/]+)\/lead_ids$/.exec(url.pathname);
    if (leadIds) {
      return reaches(request, decodeURIComponent(leadIds[1]!))
        ? { status: 200, body: { lead_ids: [], has_more: false } }
        : { status: 403, body: { error: { id: "NOT_PERMITTED" } } };
    }
    const lead = /^\/v3\/leads\/([^/]+)(\/events)?$/.exec(url.pathname);
    if (lead && request.method === "GET") {
      if (lead[2]) {
        return {
          status: 200,
          body: {
            events: [
              {
                id: "ev-consumer-1",
                cursor: "cur-1",
                event_type: "TEXT",
                user_type: "CONSUMER",
                user_display_name: "Marta K.",
                event_content: { text: "Can you fix my roof?" },
                time_created: "2026-03-14T16:05:39+00:00",
              },
            ],
          },
        };
      }
      return { status: 200, body: { ...fixture("yelp/api-get-lead.json").json, id: lead[1] } };
    }
    return undefined;
  });
  const thumbtack = useFakeServer({ status: 201, body: {} }, (request) => {
    const url = new URL(request.path, "http://fake");
    const expiresAt = expiry.get(bearerOf(request));
    if (
      url.pathname.startsWith("/api/v4/negotiations/") &&
      expiresAt !== undefined &&
      expiresAt < Date.now()
    ) {
      return { status: 401, body: {} }; // an expired access token
    }
    const webhooks = /^\/api\/v4\/businesses\/([^/]+)\/webhooks$/.exec(url.pathname);
    if (webhooks && request.method === "GET") {
      return reaches(request, decodeURIComponent(webhooks[1]!))
        ? { status: 200, body: { data: [] } }
        : { status: 403, body: {} };
    }
    // The webhook registration that follows a connect (test/admin/provider-sync.test.ts tests it).
    if (webhooks && request.method === "POST")
      return { status: 201, body: { webhookID: "700000000000000101" } };
    if (/^\/api\/v4\/negotiations\/[^/]+\/messages/.test(url.pathname) && request.method === "GET") {
      return { status: 200, body: { messages: [] } };
    }
    return undefined;
  });

  const app = useApp({
    worker: true,
    env: () => ({
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      // Every job through BullMQ, so that the worker processes a test adds take their share.
      DISPATCHER_RUNS_JOBS: "false",
      YELP_WEBHOOK_TOKEN: YELP_TOKEN,
      YELP_API_BASE_URL: yelp.url,
      THUMBTACK_API_BASE_URL: thumbtack.url,
      ...oauthClientEnv(auth.url),
      OAUTH_RETURN_URL_ORIGINS: RETURN_ORIGIN,
      JOB_BACKOFF_BASE_MS: "50",
      DISPATCHER_INTERVAL_MS: "300",
    }),
  });

  let tenant: Awaited<ReturnType<typeof createTenant>>;
  beforeAll(async () => {
    tenant = await createTenant(app.url);
  });
  beforeEach(() => {
    tokenEndpoint = "ok";
    accessLifetime = 3600;
  });

  let businesses = 0;
  /** A Thumbtack businessID is digits ("tt"); a Yelp business id letters and digits. */
  const newBusiness = (provider: string) =>
    provider === "tt"
      ? `7000000${String(++businesses).padStart(11, "0")}`
      : `${provider}Biz${String(++businesses).padStart(6, "0")}`;

  /** Starts the flow (201) and lets the fake authorize: the callback URL it redirects the browser to. */
  const authorize = async (body: Record<string, unknown>, owner?: string) => {
    const started = await tenant.admin.post("/admin/connections/oauth", body);
    expect([started.status, started.text]).toEqual([201, expect.any(String)]);
    const provider = body.provider as string;
    consentFor[provider] = owner ?? (body.externalAccountId as string);
    const consent = await fetch(started.body.authorizeUrl as string, { redirect: "manual" });
    expect(consent.status).toBe(302);
    // The redirect URI is PUBLIC_BASE_URL's; the test's API listens on a port of its own.
    const back = new URL(consent.headers.get("location")!);
    return `${app.url}${back.pathname}${back.search}`;
  };
  const callback = (url: string) => fetch(url, { redirect: "manual" });
  const counts = async () => {
    const { rows } = await app.sql.query(
      `SELECT (SELECT count(*)::int FROM connections) AS connections,
              (SELECT count(*)::int FROM audit_entries WHERE action LIKE 'connection.%') AS audits`,
    );
    return rows[0] as { connections: number; audits: number };
  };
  const connectionOf = async (business: string) => {
    const { rows } = await app.sql.query<{ id: string; credentials: string; oauth_status: string }>(
      "SELECT id, credentials, oauth_status FROM connections WHERE external_account_id = $1 AND status <> 'disabled'",
      [business],
    );
    return rows;
  };
  const start = (provider: "yelp" | "thumbtack", business: string, extra: object = {}) => ({
    provider,
    externalAccountId: business,
    displayName: `${provider} ${business}`,
    returnUrl: `${RETURN_ORIGIN}/connections?from=leadgate`,
    settings: { autoResponse: { enabled: true, text: REPLY } },
    ...extra,
  });
  /** The connection's event jobs (its webhook registration jobs aside). */
  const jobsOf = (connectionId: string) =>
    app.sql
      .query<{ operation: string; status: string }>(
        "SELECT operation, status FROM jobs WHERE connection_id = $1 AND receipt_id IS NOT NULL ORDER BY operation",
        [connectionId],
      )
      .then((result) => result.rows);
  /** Until the connection's webhook registration jobs are done (so their provider calls are over). */
  const registered = (connectionId: string) =>
    waitFor(
      () =>
        app.sql
          .query<{ status: string }>(
            "SELECT status FROM jobs WHERE connection_id = $1 AND operation = 'provider-sync'",
            [connectionId],
          )
          .then((result) => result.rows),
      (rows) => rows.every((row) => ["succeeded", "dead", "cancelled"].includes(row.status)),
    );

  it("Yelp: start, consent, callback: a connected connection whose auto-reply uses the granted token", async () => {
    const business = newBusiness("yelp");
    const answer = await callback(await authorize(start("yelp", business)));
    expect(answer.status).toBe(302);
    const location = new URL(answer.headers.get("location")!);
    expect(location.origin + location.pathname).toBe(`${RETURN_ORIGIN}/connections`);
    expect(location.searchParams.get("from")).toBe("leadgate");
    expect(location.searchParams.get("status")).toBe("connected");
    const [row] = await connectionOf(business);
    expect(location.searchParams.get("connectionId")).toBe(row!.id);

    const view = await tenant.admin.get(`/admin/connections/${row!.id}`);
    expect(view.status).toBe(200);
    expect(view.body.oauth).toEqual({
      status: "connected",
      scopes: ["leads"],
      tokenExpiresAt: expect.any(String),
      lastRefreshedAt: null,
      lastError: null,
    });
    expect(Date.parse(view.body.oauth.tokenExpiresAt as string) - Date.now()).toBeGreaterThan(3500_000);
    const token = `yelp-access-${issued}`;
    // Yelp's token endpoint got the client's id and secret in the form body, as Yelp expects them.
    expect(presentedAt("/yelp/token").at(-1)).toEqual(YELP_CLIENT);
    expect(view.text).not.toContain(token);
    expect(row!.credentials).not.toContain(token);
    const audit = await app.sql.query("SELECT action, api_key_id FROM audit_entries WHERE target_id = $1", [
      row!.id,
    ]);
    expect(audit.rows).toEqual([{ action: "connection.oauth-connect", api_key_id: tenant.keyId }]);

    const delivered = await post(`${app.url}/webhooks/yelp/${YELP_TOKEN}`, {
      time: "2026-03-14T16:05:42+00:00",
      object: "business",
      data: {
        id: business,
        updates: [{ event_type: "NEW_EVENT", event_id: "evOauth1", lead_id: "leadOauth1" }],
      },
    });
    expect(delivered.status).toBe(202);
    await waitFor(
      () => jobsOf(row!.id),
      (jobs) => jobs.length === 2 && jobs.every((job) => job.status === "succeeded"),
    );
    const replies = yelp.received.filter(
      (request) => request.method === "POST" && request.path === "/v3/leads/leadOauth1/events",
    );
    expect(replies).toHaveLength(1);
    expect(replies[0]!.headers.authorization).toBe(`Bearer ${token}`);
    expect(JSON.parse(replies[0]!.body)).toEqual({ request_type: "TEXT", request_content: REPLY });
  });

  it("Thumbtack: start, consent, callback: a connected connection whose auto-reply uses the granted token", async () => {
    const business = newBusiness("tt");
    const answer = await callback(await authorize(start("thumbtack", business)));
    expect(answer.status).toBe(302);
    const location = new URL(answer.headers.get("location")!);
    expect(location.searchParams.get("status")).toBe("connected");
    const connectionId = location.searchParams.get("connectionId")!;
    const token = `thumbtack-access-${issued}`;
    // The token endpoint got the client's id and secret by HTTP Basic client authentication.
    expect(presentedAt("/thumbtack/token").at(-1)).toEqual(THUMBTACK_CLIENT);
    const view = await tenant.admin.get(`/admin/connections/${connectionId}`);
    expect(view.body.oauth).toMatchObject({
      status: "connected",
      scopes: ["offline_access", "supply::messages"],
    });
    expect(view.body.inboundAuth).toEqual({ type: "basic" });

    // The inbound secrets made by the callback were shown to nobody: a rotation hands them out.
    const rotated = await tenant.admin.post(`/admin/connections/${connectionId}/rotate-secret`, {
      graceSeconds: 0,
    });
    const { username, password } = rotated.body.secrets as { username: string; password: string };
    const body = fixture("thumbtack/negotiation-created-v4.json").json as { data: object };
    const delivered = await post(
      `${app.url}/webhooks/thumbtack/${connectionId}`,
      { ...body, data: { ...body.data, negotiationID: "neg-oauth-1" } },
      { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}` },
    );
    expect(delivered.status).toBe(202);
    await waitFor(
      () => jobsOf(connectionId),
      (jobs) => jobs.length === 2 && jobs.every((job) => job.status === "succeeded"),
    );
    const replies = thumbtack.received.filter(
      (request) => request.method === "POST" && request.path === "/api/v4/negotiations/neg-oauth-1/messages",
    );
    expect(replies.map((request) => request.headers.authorization)).toEqual([`Bearer ${token}`]);
  });

  it("without returnUrl the callback answers a short HTML page", async () => {
    const business = newBusiness("yelp");
    const { returnUrl: _none, ...body } = start("yelp", business);
    const answer = await callback(await authorize(body));
    expect(answer.status).toBe(200);
    expect(answer.headers.get("content-type")).toContain("text/html");
    const [row] = await connectionOf(business);
    expect(await answer.text()).toContain(`Connected. Connection id: ${row!.id}`);
  });

  it("a forged, a reused and an expired state answer 400 invalid_oauth_state and write nothing", async () => {
    const business = newBusiness("yelp");
    const url = await authorize(start("yelp", business));
    // The attempt keeps the state only hashed and the PKCE verifier only encrypted.
    const state = new URL(url).searchParams.get("state")!;
    const stored = await app.sql.query("SELECT state_hash, code_verifier FROM oauth_attempts");
    expect(JSON.stringify(stored.rows)).not.toContain(state);
    expect(stored.rows.every((row: { code_verifier: string }) => row.code_verifier.startsWith("v2."))).toBe(
      true,
    );
    const before = await counts();
    const forged = new URL(url);
    forged.searchParams.set("state", "forged-state-0123456789");
    const refused = await callback(forged.toString());
    expect([refused.status, ((await refused.json()) as { error: string }).error]).toEqual([
      400,
      "invalid_oauth_state",
    ]);
    // The right state at another provider's callback is forged too.
    const elsewhere = await callback(url.replace("/oauth/yelp/", "/oauth/thumbtack/"));
    expect(elsewhere.status).toBe(400);
    expect(await counts()).toEqual(before);

    expect((await callback(url)).status).toBe(302);
    const afterFirst = await counts();
    expect(afterFirst.connections).toBe(before.connections + 1);
    const reused = await callback(url);
    expect([reused.status, ((await reused.json()) as { error: string }).error]).toEqual([
      400,
      "invalid_oauth_state",
    ]);
    expect(await counts()).toEqual(afterFirst);

    const late = newBusiness("yelp");
    const expiring = await authorize(start("yelp", late));
    await app.sql.query(
      "UPDATE oauth_attempts SET expires_at = now() - interval '1 second' WHERE consumed_at IS NULL",
    );
    const expired = await callback(expiring);
    expect(expired.status).toBe(400);
    expect(await counts()).toEqual(afterFirst);

    // A day past their expiry, attempts (used or not) are deleted by the worker's sweep; newer ones stay.
    await app.sql.query("UPDATE oauth_attempts SET expires_at = now() - interval '25 hours'");
    const fresh = await authorize(start("yelp", newBusiness("yelp")));
    const old = (
      await app.sql.query("SELECT count(*)::int AS n FROM oauth_attempts WHERE expires_at < now()")
    ).rows[0].n as number;
    expect(old).toBeGreaterThanOrEqual(2); // at least this test's used and expired attempts
    expect(await app.worker.get(TokenRefreshSweep).pruneAttempts()).toBe(old);
    const left = await app.sql.query("SELECT count(*)::int AS n FROM oauth_attempts");
    expect(left.rows[0].n).toBe(1);
    expect((await callback(fresh)).status).toBe(302); // the newer attempt still works
  });

  it("concurrent callbacks with one state: one connection", async () => {
    const business = newBusiness("tt");
    const url = await authorize(start("thumbtack", business));
    const before = await counts();
    const answers = await Promise.all(Array.from({ length: 8 }, () => callback(url)));
    expect(answers.map((answer) => answer.status).sort()).toEqual([302, 400, 400, 400, 400, 400, 400, 400]);
    expect(await connectionOf(business)).toHaveLength(1);
    expect((await counts()).connections).toBe(before.connections + 1);
  });

  it("a returnUrl off OAUTH_RETURN_URL_ORIGINS is 400 and starts nothing", async () => {
    const attempts = async () =>
      (await app.sql.query("SELECT count(*)::int AS n FROM oauth_attempts")).rows[0].n as number;
    const before = await attempts();
    for (const returnUrl of [
      "https://evil.example/connections",
      "https://app.agency.example.evil.example/x",
    ]) {
      const answer = await tenant.admin.post(
        "/admin/connections/oauth",
        start("yelp", newBusiness("yelp"), { returnUrl }),
      );
      expect([answer.status, answer.body.error, Object.keys(answer.body.details)]).toEqual([
        400,
        "validation_failed",
        ["returnUrl"],
      ]);
    }
    expect(await attempts()).toBe(before);
  });

  it.each([
    ["denied consent", "access_denied"],
    ["a failing token endpoint", "token_exchange_failed"],
    ["a token endpoint answering garbage", "token_exchange_failed"],
    ["a grant that does not reach the account", "account_not_accessible"],
  ])("%s: redirect with status=error&error=%s, nothing written", async (name, code) => {
    const business = newBusiness("yelp");
    const owner = name === "denied consent" ? "deny" : name.startsWith("a grant") ? "someOtherBiz" : business;
    const url = await authorize(start("yelp", business), owner);
    if (name === "a failing token endpoint") tokenEndpoint = "fail";
    if (name === "a token endpoint answering garbage") tokenEndpoint = "garbage";
    const before = await counts();
    const answer = await callback(url);
    expect(answer.status).toBe(302);
    const location = new URL(answer.headers.get("location")!);
    expect([location.searchParams.get("status"), location.searchParams.get("error")]).toEqual([
      "error",
      code,
    ]);
    expect(location.searchParams.get("connectionId")).toBeNull();
    expect(await counts()).toEqual(before);
    expect(await connectionOf(business)).toEqual([]);
  });

  it("an account held by another active connection: account_taken, nothing written; once disabled, it connects again", async () => {
    const business = newBusiness("yelp");
    const url = await authorize(start("yelp", business));
    // Another agency connected the same business meanwhile.
    const other = await createTenant(app.url);
    const held = await app.operator.post("/admin/connections", {
      tenantId: other.tenantId,
      provider: "yelp",
      externalAccountId: business,
      displayName: "Someone else's",
      inboundAuth: { type: "none" },
    });
    expect(held.status).toBe(201);
    const before = await counts();
    const answer = await callback(url);
    const location = new URL(answer.headers.get("location")!);
    expect([location.searchParams.get("status"), location.searchParams.get("error")]).toEqual([
      "error",
      "account_taken",
    ]);
    expect(await counts()).toEqual(before);

    expect((await other.admin.delete(`/admin/connections/${held.body.connection.id}`)).status).toBe(204);
    const again = await callback(await authorize(start("yelp", business)));
    expect(new URL(again.headers.get("location")!).searchParams.get("status")).toBe("connected");
    const [live] = await connectionOf(business);
    // Yelp deliveries for the business go to the live connection, not the disabled one.
    const delivered = await post(`${app.url}/webhooks/yelp/${YELP_TOKEN}`, {
      time: "2026-03-14T16:05:42+00:00",
      object: "business",
      data: {
        id: business,
        updates: [{ event_type: "NEW_EVENT", event_id: "evTaken1", lead_id: "leadTaken1" }],
      },
    });
    expect(delivered.status).toBe(202);
    const receipts = await app.sql.query("SELECT connection_id FROM receipts WHERE lead_id = 'leadTaken1'");
    expect(receipts.rows).toEqual([{ connection_id: live!.id }]);
  });

  it("reconnect replaces the tokens of the same connection and keeps its id", async () => {
    const business = newBusiness("tt");
    const first = await callback(await authorize(start("thumbtack", business)));
    const connectionId = new URL(first.headers.get("location")!).searchParams.get("connectionId")!;
    const started = await tenant.admin.post(`/admin/connections/${connectionId}/reconnect`, {
      returnUrl: `${RETURN_ORIGIN}/done`,
    });
    expect(started.status).toBe(201);
    consentFor.thumbtack = business;
    const consent = await fetch(started.body.authorizeUrl as string, { redirect: "manual" });
    const back = new URL(consent.headers.get("location")!);
    const answer = await callback(`${app.url}${back.pathname}${back.search}`);
    const location = new URL(answer.headers.get("location")!);
    expect([location.pathname, location.searchParams.get("connectionId")]).toEqual(["/done", connectionId]);
    expect(await connectionOf(business)).toHaveLength(1);
    const audit = await app.sql.query<{ action: string }>(
      "SELECT action FROM audit_entries WHERE target_id = $1 ORDER BY created_at",
      [connectionId],
    );
    expect(audit.rows.map((row) => row.action)).toEqual(["connection.oauth-connect", "connection.reconnect"]);
  });

  it("a tenant-admin's pasted credentials must reach the account (422); an operator's need not", async () => {
    const business = newBusiness("tt");
    const before = await counts();
    const refused = await tenant.admin.post("/admin/connections", {
      provider: "thumbtack",
      externalAccountId: business,
      displayName: "Pasted",
      inboundAuth: { type: "basic" },
      credentials: { accessToken: "pasted-token-that-reaches-nothing" },
    });
    expect([refused.status, refused.body.error]).toEqual([422, "account_not_accessible"]);
    expect(refused.text).not.toContain("pasted-token-that-reaches-nothing");
    expect(await counts()).toEqual(before);

    reach.set("pasted-token-that-reaches-it", [business]);
    const accepted = await tenant.admin.post("/admin/connections", {
      provider: "thumbtack",
      externalAccountId: business,
      displayName: "Pasted",
      inboundAuth: { type: "basic" },
      credentials: { accessToken: "pasted-token-that-reaches-it" },
    });
    expect(accepted.status).toBe(201);
    const id = accepted.body.connection.id as string;
    const patched = await tenant.admin.patch(`/admin/connections/${id}`, {
      credentials: { accessToken: "another-token-that-reaches-nothing" },
    });
    expect([patched.status, patched.body.error]).toEqual([422, "account_not_accessible"]);

    const byOperator = await app.operator.patch(`/admin/connections/${id}`, {
      credentials: { accessToken: "operator-pasted-token" },
    });
    expect(byOperator.status).toBe(200);
    expect(byOperator.body.connection.oauth.status).toBe("connected");
  });

  it("a provider without a client id answers 501 oauth_not_configured", async () => {
    const bare = await app.startApi({ YELP_OAUTH_CLIENT_ID: "", YELP_OAUTH_CLIENT_SECRET: "" });
    const answer = await fetch(`${bare.url}/admin/connections/oauth`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
      body: JSON.stringify(start("yelp", newBusiness("yelp"))),
    });
    expect([answer.status, ((await answer.json()) as { error: string }).error]).toEqual([
      501,
      "oauth_not_configured",
    ]);
  });

  describe("managed tokens", () => {
    /** A Thumbtack connection made through the flow, with its webhook credentials. */
    const connectThumbtack = async () => {
      const business = newBusiness("tt");
      const answer = await callback(await authorize(start("thumbtack", business)));
      const connectionId = new URL(answer.headers.get("location")!).searchParams.get("connectionId")!;
      const rotated = await tenant.admin.post(`/admin/connections/${connectionId}/rotate-secret`, {
        graceSeconds: 0,
      });
      const { username, password } = rotated.body.secrets as { username: string; password: string };
      await registered(connectionId);
      const basic = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
      const deliver = (negotiationId: string) => {
        const body = fixture("thumbtack/negotiation-created-v4.json").json as { data: object };
        return post(
          `${app.url}/webhooks/thumbtack/${connectionId}`,
          { ...body, data: { ...body.data, negotiationID: negotiationId } },
          { authorization: basic },
        );
      };
      return { connectionId, business, deliver, token: `thumbtack-access-${issued}` };
    };
    const expire = (connectionId: string) =>
      app.sql.query("UPDATE connections SET token_expires_at = now() - interval '1 minute' WHERE id = $1", [
        connectionId,
      ]);
    const repliesTo = (prefix: string) =>
      thumbtack.received.filter(
        (request) => request.method === "POST" && request.path.startsWith(`/api/v4/negotiations/${prefix}`),
      );

    it("50 jobs of one connection starting together with an expired token cause exactly one refresh", async () => {
      const c = await connectThumbtack();
      await expire(c.connectionId);
      // Paused, the deliveries' jobs wait as held; the resume queues all of them at once.
      expect((await tenant.admin.post(`/admin/connections/${c.connectionId}/pause`)).status).toBe(200);
      const answers = await Promise.all(Array.from({ length: 50 }, (_, n) => c.deliver(`neg-many-${n}`)));
      expect(answers.every((answer) => answer.status === 202)).toBe(true);
      const presentedBefore = refreshesPresented.length;
      expect((await tenant.admin.post(`/admin/connections/${c.connectionId}/resume`)).body.requeuedJobs).toBe(
        100,
      );
      await waitFor(
        () => jobsOf(c.connectionId),
        (jobs) => jobs.length === 100 && jobs.every((job) => job.status === "succeeded"),
        60_000,
      );
      const presented = refreshesPresented.slice(presentedBefore);
      expect(presented).toEqual([`${c.token}-refresh`]);
      const replies = repliesTo("neg-many-");
      expect(replies).toHaveLength(50);
      const refreshed = `${c.token}-r${presentedBefore + 1}`;
      expect(new Set(replies.map((request) => request.headers.authorization))).toEqual(
        new Set([`Bearer ${refreshed}`]),
      );
      const view = await tenant.admin.get(`/admin/connections/${c.connectionId}`);
      expect(view.body.oauth).toMatchObject({ status: "connected", lastError: null });
      expect(view.body.oauth.lastRefreshedAt).not.toBeNull();
      expect(view.text).not.toContain(refreshed);
      // The new pair was stored before use: the next refresh presents the new refresh token.
      await expire(c.connectionId);
      expect((await c.deliver("neg-many-again")).status).toBe(202);
      await waitFor(
        () => jobsOf(c.connectionId),
        (jobs) => jobs.length === 102 && jobs.every((job) => job.status === "succeeded"),
      );
      expect(refreshesPresented.slice(presentedBefore)).toEqual([
        `${c.token}-refresh`,
        `${refreshed}-refresh`,
      ]);
    });

    it("a provider 401 forces one refresh and one retry", async () => {
      const c = await connectThumbtack();
      const presentedBefore = refreshesPresented.length;
      thumbtack.reply({ status: 401, body: {} }); // the first call of the reply job is refused
      expect((await c.deliver("neg-401-1")).status).toBe(202);
      await waitFor(
        () => jobsOf(c.connectionId),
        (jobs) => jobs.length === 2 && jobs.every((job) => job.status === "succeeded"),
      );
      expect(refreshesPresented.slice(presentedBefore)).toEqual([`${c.token}-refresh`]);
      expect(presentedAt("/thumbtack/token").at(-1)).toEqual(THUMBTACK_CLIENT); // the refresh
      expect(repliesTo("neg-401-1").map((request) => request.headers.authorization)).toEqual([
        `Bearer ${c.token}-r${presentedBefore + 1}`,
      ]);
    });

    it("invalid_grant: reauthorization_required, only provider-calling jobs wait, reconnect runs them", async () => {
      const c = await connectThumbtack();
      liveRefresh.delete(`${c.token}-refresh`); // the grant was revoked at the provider
      await expire(c.connectionId);
      expect((await c.deliver("neg-revoked-1")).status).toBe(202);
      const jobs = await waitFor(
        () => jobsOf(c.connectionId),
        (rows) => rows.length === 2 && rows.every((job) => ["succeeded", "blocked"].includes(job.status)),
      );
      expect(jobs).toEqual([
        { operation: "initial-response", status: "blocked" },
        { operation: "lead-upsert", status: "succeeded" },
      ]);
      const view = await tenant.admin.get(`/admin/connections/${c.connectionId}`);
      expect([view.body.status, view.body.oauth.status, view.body.oauth.lastError]).toEqual([
        "credential_error",
        "reauthorization_required",
        "invalid_grant",
      ]);
      const presented = refreshesPresented.filter((token) => token === `${c.token}-refresh`);
      expect(presented).toHaveLength(1); // not presented again by a retry

      const started = await tenant.admin.post(`/admin/connections/${c.connectionId}/reconnect`, {});
      consentFor.thumbtack = c.business;
      const consent = await fetch(started.body.authorizeUrl as string, { redirect: "manual" });
      const back = new URL(consent.headers.get("location")!);
      const page = await callback(`${app.url}${back.pathname}${back.search}`);
      expect(page.status).toBe(200);
      await waitFor(
        () => jobsOf(c.connectionId),
        (rows) => rows.every((job) => job.status === "succeeded"),
      );
      expect(repliesTo("neg-revoked-1").map((request) => request.headers.authorization)).toEqual([
        `Bearer thumbtack-access-${issued}`,
      ]);
      const after = await tenant.admin.get(`/admin/connections/${c.connectionId}`);
      expect([after.body.status, after.body.oauth.status, after.body.oauth.lastError]).toEqual([
        "active",
        "connected",
        null,
      ]);
    });

    it("Yelp's own error shape for a refused refresh is invalid_grant too: its lead fetch waits", async () => {
      const business = newBusiness("yelp");
      const answer = await callback(await authorize(start("yelp", business)));
      const connectionId = new URL(answer.headers.get("location")!).searchParams.get("connectionId")!;
      liveRefresh.delete(`yelp-access-${issued}-refresh`);
      await expire(connectionId);
      const delivered = await post(`${app.url}/webhooks/yelp/${YELP_TOKEN}`, {
        time: "2026-03-14T16:05:42+00:00",
        object: "business",
        data: {
          id: business,
          updates: [{ event_type: "NEW_EVENT", event_id: "evGone1", lead_id: "leadGone1" }],
        },
      });
      expect(delivered.status).toBe(202);
      // The lead fetch is blocked; the first reply waits for it (it renders the lead as fetched).
      await waitFor(
        () => jobsOf(connectionId),
        (rows) =>
          JSON.stringify(rows.map((job) => [job.operation, job.status])) ===
          JSON.stringify([
            ["initial-response", "waiting"],
            ["lead-upsert", "blocked"],
          ]),
      );
      // Refused for its grant: the refresh came from the right client, authenticated in the body.
      expect(presentedAt("/yelp/token").at(-1)).toEqual(YELP_CLIENT);
      const view = await tenant.admin.get(`/admin/connections/${connectionId}`);
      expect([view.body.status, view.body.oauth.status]).toEqual([
        "credential_error",
        "reauthorization_required",
      ]);
    });

    it("the scheduled sweep refreshes an idle connection's token before it lapses, once", async () => {
      const c = await connectThumbtack();
      const presentedBefore = refreshesPresented.length;
      // An hour-long token with two minutes left: within the margin (300 s), and nobody calls.
      await app.sql.query(
        `UPDATE connections SET token_issued_at = now() - interval '58 minutes',
           token_expires_at = now() + interval '2 minutes' WHERE id = $1`,
        [c.connectionId],
      );
      const sweep = app.worker.get(TokenRefreshSweep);
      await Promise.all([sweep.sweep(), sweep.sweep()]);
      const ofThis = () =>
        refreshesPresented.slice(presentedBefore).filter((token) => token.startsWith(c.token));
      expect(ofThis()).toEqual([`${c.token}-refresh`]);
      const view = await tenant.admin.get(`/admin/connections/${c.connectionId}`);
      expect(Date.parse(view.body.oauth.tokenExpiresAt as string) - Date.now()).toBeGreaterThan(3500_000);
      expect(view.body.oauth.lastRefreshedAt).not.toBeNull();
      // Fresh now: the next sweep leaves it alone.
      await sweep.sweep();
      expect(ofThis()).toHaveLength(1);
    });

    it("disconnect disables at once, then revokes the grant (retried after a failure) and deletes the tokens", async () => {
      const c = await connectThumbtack();
      const deleted = await tenant.admin.delete(`/admin/connections/${c.connectionId}`);
      expect(deleted.status).toBe(204);
      expect((await tenant.admin.get(`/admin/connections/${c.connectionId}`)).body.status).toBe("disabled");
      await registered(c.connectionId); // the provider-side webhook goes first
      const revokes = () => auth.received.filter((request) => request.path === "/thumbtack/revoke");
      const sweep = app.worker.get(TokenRefreshSweep);

      auth.reply({ status: 503, body: {} }); // the revoke endpoint is down once
      await sweep.cleanUp();
      expect(revokes()).toHaveLength(1);
      const failed = await tenant.admin.get(`/admin/connections/${c.connectionId}`);
      expect([failed.body.hasCredentials, failed.body.oauth.lastError]).toEqual([true, "revoke_failed"]);

      await app.sql.query("UPDATE connections SET cleanup_due_at = now() WHERE id = $1", [c.connectionId]);
      await sweep.cleanUp();
      expect(revokes()).toHaveLength(2);
      const form = new URLSearchParams(revokes()[1]!.body);
      expect([form.get("token"), form.get("token_type_hint")]).toEqual([
        `${c.token}-refresh`,
        "refresh_token",
      ]);
      expect(presentedAt("/thumbtack/revoke").at(-1)).toEqual(THUMBTACK_CLIENT);
      const { rows } = await app.sql.query(
        "SELECT credentials, oauth_status, cleanup_due_at FROM connections WHERE id = $1",
        [c.connectionId],
      );
      expect(rows).toEqual([{ credentials: null, oauth_status: "not_connected", cleanup_due_at: null }]);
      await sweep.cleanUp();
      expect(revokes()).toHaveLength(2); // done once
    });

    it("3-second tokens, two worker processes, 300 deliveries over 60 s: every reply sent, none blocked or dead, each refresh token presented once, no token in a log line", async () => {
      accessLifetime = 3;
      const c = await connectThumbtack();
      // Two more workers, as processes of their own (the file's in-process worker runs too; it holds
      // the job outbox, and DISPATCHER_RUNS_JOBS=false makes it hand every job to BullMQ, so that
      // this light load spreads over all three and the refreshes race between processes).
      // LOG_LEVEL=debug: each job's success is logged too, and no line may carry a token.
      const workers = [
        app.spawn("dist/worker.js", { LOG_LEVEL: "debug" }),
        app.spawn("dist/worker.js", { LOG_LEVEL: "debug" }),
      ];
      await Promise.all(workers.map((worker) => worker.waitFor(/worker started/)));
      const presentedBefore = refreshesPresented.length;
      const started = Date.now();
      for (let n = 0; n < 300; n += 1) {
        expect((await c.deliver(`neg-life-${n}`)).status).toBe(202);
        // Spread over 60 s by the clock, however long each delivery took.
        await new Promise((resolve) =>
          setTimeout(resolve, Math.max(0, started + (n + 1) * 200 - Date.now())),
        );
      }
      const jobs = await waitFor(
        () => jobsOf(c.connectionId),
        (rows) =>
          rows.length === 600 && rows.every((job) => ["succeeded", "dead", "blocked"].includes(job.status)),
        60_000,
      );
      expect(jobs.filter((job) => job.status !== "succeeded")).toEqual([]);
      const presented = refreshesPresented.slice(presentedBefore);
      expect(presented.length).toBeGreaterThanOrEqual(15); // the tokens lapsed every 3 s of the minute
      expect(new Set(presented).size).toBe(presented.length);
      const replied = new Set(
        repliesTo("neg-life-")
          .filter((request) => (expiry.get(bearerOf(request)) ?? 0) >= request.at)
          .map((request) => request.path),
      );
      expect(replied.size).toBe(300);
      const view = await tenant.admin.get(`/admin/connections/${c.connectionId}`);
      expect([view.body.status, view.body.oauth.status]).toEqual(["active", "connected"]);
      // The workers logged their jobs (and refreshes), never a token.
      const logs = workers.map((worker) => worker.output()).join("\n");
      expect(logs).toMatch(/job succeeded/);
      const tokens = [...expiry.keys()].flatMap((token) => [token, `${token}-refresh`]);
      expect(tokens.filter((token) => logs.includes(token))).toEqual([]);
    }, 180_000);
  });
});
