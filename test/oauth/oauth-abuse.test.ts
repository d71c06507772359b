// The OAuth callback against abuse. The callback has no API key: its `state`
// authenticates it, so a state that opens no attempt is a failed authentication and counts against
// the client IP's PREAUTH_FAILURE_LIMIT, as a wrong webhook secret or an unknown API key does:
// beyond it, that IP's forged states answer 429 without database work, while a valid callback is
// never refused. And an attempt dies with the API key that started it: revoking the key ends its
// pending attempts (their callback answers 400 invalid_oauth_state, nothing written).
// Each test speaks from its own client address (X-Forwarded-For, believed from TRUST_PROXY).
import type { PoolClient } from "pg";
import { adminAs, createTenant, OPERATOR_KEY } from "../support/admin.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { FakeAuthorizationServer, OAUTH_CLIENTS } from "../support/oauth-server.js";
import { waitFor } from "../support/wait.js";

const LIMIT = 3;
const RETURN_ORIGIN = "https://app.agency.example";

describe("OAuth callback: the failed-authentication budget, and attempts ended with their key", () => {
  /** Business each issued access token reaches. */
  const reach = new Map<string, string>();
  let issued = 0;
  /** How long the token endpoint takes to answer (to revoke a key while a callback is under way). */
  let tokenDelayMs = 0;
  /** Strict as Yelp (test/support/oauth-server.ts); a code's grant is the business consented to. */
  const authorization = new FakeAuthorizationServer<string>();
  /** The business the next consent grants. */
  let consentFor = "";
  const auth = useFakeServer({ status: 404, body: {} }, (request) => {
    const url = new URL(request.path, "http://fake");
    if (url.pathname === "/yelp/authorize") return authorization.authorize("yelp", url, consentFor);
    if (url.pathname !== "/yelp/token" || request.method !== "POST") return undefined;
    const refused = authorization.checkClient("yelp", request);
    if (refused) return refused;
    const redeemed = authorization.redeem("yelp", new URLSearchParams(request.body));
    if ("refused" in redeemed) return redeemed.refused;
    const accessToken = `yelp-access-${++issued}`;
    reach.set(accessToken, redeemed.grant);
    return {
      status: 200,
      delayMs: tokenDelayMs,
      body: {
        access_token: accessToken,
        token_type: "Bearer",
        expires_in: 3600,
        refresh_token: `r-${issued}`,
      },
    };
  });
  const yelp = useFakeServer({ status: 404, body: {} }, (request) => {
    const leadIds = /^\/v3\/businesses\/([^/]+)\/lead_ids/.exec(request.path);
    if (!leadIds) return undefined;
    const token = (request.headers.authorization ?? "").replace(/^Bearer /, "");
    return reach.get(token) === decodeURIComponent(leadIds[1]!)
      ? { status: 200, body: { lead_ids: [], has_more: false } }
      : { status: 403, body: { error: { id: "NOT_PERMITTED" } } };
  });
  const app = useApp({
    env: () => ({
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      PREAUTH_FAILURE_LIMIT: String(LIMIT),
      TRUST_PROXY: "127.0.0.1",
      YELP_API_BASE_URL: yelp.url,
      YELP_OAUTH_CLIENT_ID: OAUTH_CLIENTS.yelp.clientId,
      YELP_OAUTH_CLIENT_SECRET: OAUTH_CLIENTS.yelp.clientSecret,
      YELP_OAUTH_AUTHORIZE_URL: `${auth.url}/yelp/authorize`,
      YELP_OAUTH_TOKEN_URL: `${auth.url}/yelp/token`,
      OAUTH_RETURN_URL_ORIGINS: RETURN_ORIGIN,
    }),
  });

  let tenant: Awaited<ReturnType<typeof createTenant>>;
  beforeAll(async () => {
    tenant = await createTenant(app.url);
  });
  beforeEach(() => {
    tokenDelayMs = 0;
  });

  let businesses = 0;
  /**
   * Starts a flow for a new business with `admin` and lets its owner consent at the fake provider:
   * answers the state and code the provider sends back (not followed yet).
   */
  const begin = async (admin = tenant.admin) => {
    const business = `abuseBiz${String(++businesses).padStart(6, "0")}`;
    const started = await admin.post("/admin/connections/oauth", {
      provider: "yelp",
      externalAccountId: business,
      displayName: `Yelp ${business}`,
      returnUrl: `${RETURN_ORIGIN}/connections`,
    });
    expect(started.status).toBe(201);
    consentFor = business;
    const consent = await fetch(started.body.authorizeUrl as string, { redirect: "manual" });
    expect(consent.status).toBe(302);
    const back = new URL(consent.headers.get("location")!).searchParams;
    return { business, state: back.get("state")!, code: back.get("code")! };
  };
  /** The provider's redirect to the callback, as the owner's browser at `ip` follows it. */
  const callback = (ip: string, query: Record<string, string>) =>
    fetch(`${app.url}/oauth/yelp/callback?${new URLSearchParams(query).toString()}`, {
      redirect: "manual",
      headers: { "x-forwarded-for": ip },
    });
  const connectWith = (ip: string, flow: { state: string; code: string }) =>
    callback(ip, { code: flow.code, state: flow.state });
  /** The status and error code of an answer (a redirect has no code: its `status=` is given instead). */
  const errorOf = async (answer: Response) => {
    const text = await answer.text();
    if (answer.status === 302)
      return [302, new URL(answer.headers.get("location")!).searchParams.get("status")];
    return [answer.status, (JSON.parse(text) as { error: string }).error];
  };
  const expectRefused = async (answer: Response) => {
    expect(await errorOf(answer)).toEqual([429, "rate_limited"]);
    expect(Number(answer.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(Number(answer.headers.get("retry-after"))).toBeLessThanOrEqual(60);
  };
  const expectConnected = (answer: Response) => {
    expect(answer.status).toBe(302);
    expect(new URL(answer.headers.get("location")!).searchParams.get("status")).toBe("connected");
  };
  const counts = async () =>
    (
      await app.sql.query<{ connections: number; audits: number }>(
        `SELECT (SELECT count(*)::int FROM connections) AS connections,
                (SELECT count(*)::int FROM audit_entries WHERE action LIKE 'connection.%') AS audits`,
      )
    ).rows[0]!;
  /** Holds the attempts table: any query of it waits until the lock is released. */
  const lockAttempts = async (): Promise<PoolClient> => {
    const lock = await app.sql.connect();
    await lock.query("BEGIN");
    await lock.query("LOCK TABLE oauth_attempts IN ACCESS EXCLUSIVE MODE");
    return lock;
  };
  const release = async (lock: PoolClient) => {
    await lock.query("ROLLBACK");
    lock.release();
  };
  /** The promise's value, or "no answer" if it takes longer than `ms`. */
  const within = async <T>(promise: Promise<T>, ms: number): Promise<T | "no answer"> => {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<"no answer">((resolve) => (timer = setTimeout(() => resolve("no answer"), ms)));
    try {
      return await Promise.race([promise, late]);
    } finally {
      clearTimeout(timer);
    }
  };

  it("forged states answer 400 up to PREAUTH_FAILURE_LIMIT, then 429; a valid callback from that address still connects", async () => {
    const ip = "203.0.113.21";
    const flow = await begin();
    const before = await counts();
    const answers = [
      await callback(ip, { code: "c", state: "forged-state-0123456789" }),
      await callback(ip, { code: "c" }), // no state at all
      await callback(ip, { error: "access_denied", state: `${flow.state}x` }),
    ];
    for (const answer of answers) expect(await errorOf(answer)).toEqual([400, "invalid_oauth_state"]);
    await expectRefused(await callback(ip, { code: "c", state: "forged-state-9876543210" }));
    await expectRefused(await callback(ip, { code: "c" }));
    expect(await counts()).toEqual(before);

    // The valid state from the same address is never refused by the budget.
    expectConnected(await connectWith(ip, flow));
    // Another address has its own budget.
    expect(await errorOf(await callback("203.0.113.22", { code: "c", state: "forged" }))).toEqual([
      400,
      "invalid_oauth_state",
    ]);
  });

  it("a reused state counts as a failure; over the budget it answers 429", async () => {
    const ip = "203.0.113.23";
    const flow = await begin();
    expectConnected(await connectWith(ip, flow));
    for (let i = 0; i < LIMIT; i++) {
      expect(await errorOf(await connectWith(ip, flow))).toEqual([400, "invalid_oauth_state"]);
    }
    await expectRefused(await connectWith(ip, flow));
  });

  it("over the budget, forged states are refused without a database query; valid ones still connect", async () => {
    const ip = "203.0.113.24";
    const flow = await begin();
    for (let i = 0; i < LIMIT; i++) await callback(ip, { code: "c", state: `forged-${i}` });
    await expectRefused(await callback(ip, { code: "c", state: "forged-last" }));
    const lock = await lockAttempts();
    try {
      const answers = await within(
        Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            callback(ip, { code: "c", state: `forged-while-locked-${i}-0123456789abcdef` }),
          ),
        ),
        10_000, // a query would wait behind the lock, to a 503 at the 10 s statement timeout at best
      );
      expect(answers).not.toBe("no answer");
      for (const answer of answers as Response[]) await expectRefused(answer);
    } finally {
      await release(lock);
    }
    expectConnected(await connectWith(ip, flow));
  });

  it("revoking the API key that started an attempt ends it: its callback answers 400 invalid_oauth_state, nothing written", async () => {
    const created = await tenant.admin.post("/admin/api-keys", { name: "connector", role: "tenant-admin" });
    expect(created.status).toBe(201);
    const connector = adminAs(app.url, created.body.key as string);
    const [first, second] = [await begin(connector), await begin(connector)];
    const others = await begin(); // started with another key of the tenant: untouched
    const byOperator = await begin(adminAsOperatorFor(tenant.tenantId)); // another key: untouched

    expect((await tenant.admin.delete(`/admin/api-keys/${created.body.id as string}`)).status).toBe(204);
    const pending = await app.sql.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM oauth_attempts
       WHERE api_key_id = $1 AND consumed_at IS NULL AND expires_at > now()`,
      [created.body.id],
    );
    expect(pending.rows[0]!.n).toBe(0);

    const before = await counts();
    const ip = "203.0.113.25";
    for (const flow of [first, second]) {
      expect(await errorOf(await connectWith(ip, flow))).toEqual([400, "invalid_oauth_state"]);
    }
    expect(await counts()).toEqual(before);
    expectConnected(await connectWith(ip, others));
    expectConnected(await connectWith(ip, byOperator));
  });

  it("a key revoked while its attempt's callback is under way: the callback writes nothing", async () => {
    const created = await tenant.admin.post("/admin/api-keys", {
      name: "slow connector",
      role: "tenant-admin",
    });
    const flow = await begin(adminAs(app.url, created.body.key as string));
    tokenDelayMs = 1_000;
    const exchanges = () =>
      Promise.resolve(auth.received.filter((request) => request.path === "/yelp/token").length);
    const exchangesBefore = await exchanges();
    const before = await counts();
    const answer = connectWith("203.0.113.26", flow);
    await waitFor(exchanges, (n) => n > exchangesBefore);
    expect((await tenant.admin.delete(`/admin/api-keys/${created.body.id as string}`)).status).toBe(204);
    expect(await errorOf(await answer)).toEqual([400, "invalid_oauth_state"]);
    expect(await counts()).toEqual(before);
  });

  /** An operator key's flows for the tenant (the operator names the tenant). */
  function adminAsOperatorFor(tenantId: string) {
    const operator = app.operator;
    return {
      ...operator,
      post: (path: string, body?: unknown) => operator.post(path, { ...(body as object), tenantId }),
    };
  }
});
