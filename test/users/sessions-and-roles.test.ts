// Console sessions on the admin API (api.md "Console and users"): the cookie with its CSRF token,
// the Authorization header winning over it, tenant-viewers reading only, disabling a user, session
// expiry, the queue dashboard, OAuth attempts started from the console, invitations mailed.
import { adminAs, createTenant, OPERATOR_KEY } from "../support/admin.js";
import { callWithCookie, signedInUser, signIn, uniqueEmail } from "../support/console.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { useSmtpServer } from "../support/smtp.js";

const PUBLIC_ORIGIN = "https://leadgate.agency.example";

describe("console sessions on the admin API", () => {
  const smtp = useSmtpServer();
  const auth = useFakeServer({ status: 404, body: {} });
  const app = useApp({
    env: () => ({
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      PUBLIC_BASE_URL: PUBLIC_ORIGIN,
      TRUST_PROXY: "127.0.0.1",
      SMTP_URL: smtp.url,
      ALERT_EMAIL_FROM: "leadgate@agency.example",
      YELP_OAUTH_CLIENT_ID: "leadgate-yelp",
      YELP_OAUTH_CLIENT_SECRET: "yelp-client-secret-0123456789",
      YELP_OAUTH_AUTHORIZE_URL: `${auth.url}/yelp/authorize`,
      YELP_OAUTH_TOKEN_URL: `${auth.url}/yelp/token`,
    }),
  });
  const count = async (table: string) =>
    (await app.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;
  let tenant: Awaited<ReturnType<typeof createTenant>>;
  beforeAll(async () => {
    tenant = await createTenant(app.url);
  });

  it("with a cookie a change needs the session's X-CSRF-Token: missing or wrong is 403 and writes nothing", async () => {
    const user = await signedInUser(app.url, { role: "operator" });
    const before = await count("tenants");
    for (const csrf of [undefined, "wrong", `${user.csrf}x`]) {
      const answer = await callWithCookie(app.url, user.cookie, "POST", "/admin/tenants", {
        csrf,
        body: { name: "csrf" },
      });
      expect([answer.status, answer.body.error]).toEqual([403, "csrf_failed"]);
    }
    expect(await count("tenants")).toBe(before);
    expect((await user.post("/admin/tenants", { name: "with csrf" })).status).toBe(201);

    const signOut = await callWithCookie(app.url, user.cookie, "DELETE", "/console/api/session");
    expect([signOut.status, signOut.body.error]).toEqual([403, "csrf_failed"]);
    expect((await user.get("/console/api/session")).status).toBe(200);
    const out = await user.delete("/console/api/session");
    expect([out.status, out.headers.get("set-cookie")]).toEqual([204, expect.stringContaining("Max-Age=0")]);
    expect((await user.get("/console/api/session")).status).toBe(401);
    expect((await user.get("/admin/tenants")).status).toBe(401);
  });

  it("behind an https PUBLIC_BASE_URL the session cookie is Secure and named __Host-; the plain name is not read", async () => {
    const user = await signedInUser(app.url, { role: "tenant-viewer", tenantId: tenant.tenantId });
    const again = await signIn(app.url, user.email, "correct horse battery staple");
    expect(again.setCookie).toMatch(
      /^__Host-leadgate_session=[^;]+; Path=\/; Max-Age=604800; HttpOnly; SameSite=Lax; Secure$/,
    );
    const token = again.cookie!.split("=")[1]!;
    expect((await callWithCookie(app.url, again.cookie!, "GET", "/admin/users")).status).toBe(200);
    // The same token under the plain name, as a sibling subdomain could plant it: no session.
    const planted = await callWithCookie(app.url, `leadgate_session=${token}`, "GET", "/console/api/session");
    expect(planted.status).toBe(401);
    expect((await callWithCookie(app.url, `leadgate_session=${token}`, "GET", "/admin/users")).status).toBe(
      401,
    );
    const out = await callWithCookie(app.url, again.cookie!, "DELETE", "/console/api/session", {
      csrf: again.body.csrfToken as string,
    });
    expect([out.status, out.headers.get("set-cookie")]).toEqual([
      204,
      expect.stringMatching(/^__Host-leadgate_session=; Path=\/; Max-Age=0; .*Secure$/),
    ]);
  });

  it("a request with an Authorization header is judged by it alone, the cookie ignored", async () => {
    const operator = await signedInUser(app.url, { role: "operator" });
    const badKey = await fetch(`${app.url}/admin/tenants`, {
      headers: { cookie: operator.cookie, authorization: "Bearer lg_000000000000_nope" },
    });
    expect(badKey.status).toBe(401);
    const tenantKey = await fetch(`${app.url}/admin/tenants`, {
      headers: { cookie: operator.cookie, authorization: `Bearer ${tenant.key}` },
    });
    const items = ((await tenantKey.json()) as { items: { id: string }[] }).items;
    expect(items.map((t) => t.id)).toEqual([tenant.tenantId]);
    // No CSRF token needed with a key, whatever cookie comes along.
    const created = await fetch(`${app.url}/admin/tenants`, {
      method: "POST",
      headers: {
        cookie: operator.cookie,
        authorization: `Bearer ${OPERATOR_KEY}`,
        "content-type": "application/json",
      },
      body: JSON.stringify({ name: "by key" }),
    });
    expect(created.status).toBe(201);
  });

  it("a tenant-viewer, user or API key, reads but changes nothing (403 forbidden)", async () => {
    const viewer = await signedInUser(app.url, { role: "tenant-viewer", tenantId: tenant.tenantId });
    const key = await tenant.admin.post("/admin/api-keys", { name: "reports", role: "tenant-viewer" });
    expect(key.status).toBe(201);
    const viewerKey = adminAs(app.url, key.body.key as string);
    const before = [await count("users"), await count("api_keys"), await count("notification_channels")];
    for (const client of [viewer, viewerKey]) {
      expect((await client.get("/admin/users")).status).toBe(200);
      expect((await client.get("/admin/api-keys")).status).toBe(200);
      expect((await client.get(`/admin/tenants/${tenant.tenantId}`)).status).toBe(200);
      const invite = await client.post("/admin/users", { email: uniqueEmail(), role: "tenant-viewer" });
      expect([invite.status, invite.body.error]).toEqual([403, "forbidden"]);
      const mint = await client.post("/admin/api-keys", { name: "x", role: "tenant-viewer" });
      expect([mint.status, mint.body.error]).toEqual([403, "forbidden"]);
      const revoke = await client.delete(`/admin/api-keys/${tenant.keyId}`);
      expect([revoke.status, revoke.body.error]).toEqual([403, "forbidden"]);
      const disable = await client.delete(`/admin/users/${viewer.id}`);
      expect([disable.status, disable.body.error]).toEqual([403, "forbidden"]);
    }
    expect([await count("users"), await count("api_keys"), await count("notification_channels")]).toEqual(
      before,
    );
    expect(
      (await tenant.admin.get("/admin/api-keys")).body.items.every((k: { revokedAt: null }) => !k.revokedAt),
    ).toBe(true);
  });

  it("disabling a user ends its live session and its pending OAuth attempt at once (never oneself: 409); the audit names who did it", async () => {
    const admin = await signedInUser(
      app.url,
      { role: "tenant-admin", tenantId: tenant.tenantId },
      tenant.admin,
    );
    const returnUrl = `${PUBLIC_ORIGIN}/console/connections`;
    const started = await admin.post("/admin/connections/oauth", {
      provider: "yelp",
      externalAccountId: "consoleBiz000001",
      displayName: "Yelp from the console",
      returnUrl,
    });
    expect(started.status).toBe(201);
    const attempt = await app.sql.query("SELECT user_id, api_key_id, return_url FROM oauth_attempts");
    expect(attempt.rows).toEqual([{ user_id: admin.id, api_key_id: null, return_url: returnUrl }]);
    const elsewhere = await admin.post("/admin/connections/oauth", {
      provider: "yelp",
      externalAccountId: "consoleBiz000002",
      displayName: "x",
      returnUrl: "https://evil.example/steal",
    });
    expect([elsewhere.status, Object.keys(elsewhere.body.details)]).toEqual([400, ["returnUrl"]]);

    // A key the user made is the tenant's: it outlives the user (docs/console.md).
    const made = await admin.post("/admin/api-keys", { name: "made by a user", role: "tenant-admin" });
    expect(made.status).toBe(201);
    const other = await createTenant(app.url);
    expect((await other.admin.delete(`/admin/users/${admin.id}`)).status).toBe(404);
    expect((await admin.get("/admin/users")).status).toBe(200);
    // Not oneself: 409, and the user stays as it was.
    const self = await admin.delete(`/admin/users/${admin.id}`);
    expect([self.status, self.body.error]).toEqual([409, "cannot_disable_self"]);
    const kept = await app.sql.query("SELECT disabled_at FROM users WHERE id = $1", [admin.id]);
    expect(kept.rows).toEqual([{ disabled_at: null }]);
    expect((await admin.get("/admin/users")).status).toBe(200);

    const operator = await signedInUser(app.url, { role: "operator" });
    expect((await operator.delete(`/admin/users/${admin.id}`)).status).toBe(204);
    expect((await admin.get("/admin/users")).status).toBe(401);
    expect((await admin.get("/console/api/session")).status).toBe(401);
    expect((await adminAs(app.url, made.body.key as string).get("/admin/users")).status).toBe(200);
    const live = await app.sql.query("SELECT 1 FROM oauth_attempts WHERE expires_at > now()");
    expect(live.rowCount).toBe(0);
    const state = new URL(started.body.authorizeUrl as string).searchParams.get("state")!;
    const callback = await fetch(`${app.url}/oauth/yelp/callback?code=c&state=${encodeURIComponent(state)}`, {
      redirect: "manual",
    });
    expect(callback.status).toBe(400);
    expect((await signIn(app.url, admin.email, "correct horse battery staple")).status).toBe(401);
    const audit = await app.sql.query(
      "SELECT user_id, api_key_id FROM audit_entries WHERE action = 'user.disable' AND target_id = $1",
      [admin.id],
    );
    expect(audit.rows).toEqual([{ user_id: operator.id, api_key_id: null }]);
  });

  it("disabling with revokeKeys=true revokes the API keys the user created (key views name it in createdBy) and ends their OAuth attempts; other keys stay", async () => {
    const own = await createTenant(app.url);
    const admin = await signedInUser(app.url, { role: "tenant-admin", tenantId: own.tenantId }, own.admin);
    const made = [
      await admin.post("/admin/api-keys", { name: "zapier", role: "tenant-admin" }),
      await admin.post("/admin/api-keys", { name: "reports", role: "tenant-viewer" }),
    ];
    expect(made.map((answer) => answer.status)).toEqual([201, 201]);
    const byKey = await own.admin.post("/admin/api-keys", {
      name: "by the first key",
      role: "tenant-viewer",
    });
    const [mine, theirs] = [made.map((answer) => answer.body.id as string), byKey.body.id as string];
    const listed = await own.admin.get("/admin/api-keys");
    const createdBy = Object.fromEntries(
      listed.body.items.map((key: { id: string; createdBy: unknown }) => [key.id, key.createdBy]),
    );
    expect(createdBy).toEqual({
      [mine[0]!]: { userId: admin.id, apiKeyId: null },
      [mine[1]!]: { userId: admin.id, apiKeyId: null },
      [theirs]: { userId: null, apiKeyId: own.keyId },
      // The tenant's first key: made by the operator key that created the tenant.
      [own.keyId]: { userId: null, apiKeyId: expect.any(String) },
    });
    const started = await adminAs(app.url, made[0]!.body.key as string).post("/admin/connections/oauth", {
      provider: "yelp",
      externalAccountId: "revokedKeyBiz01",
      displayName: "Yelp by a key",
    });
    expect(started.status).toBe(201);

    const operator = await signedInUser(app.url, { role: "operator" });
    const unknown = await operator.delete(`/admin/users/${admin.id}?revokeKeys=maybe`);
    expect([unknown.status, Object.keys(unknown.body.details)]).toEqual([400, ["revokeKeys"]]);
    expect((await operator.delete(`/admin/users/${admin.id}?revokeKeys=true`)).status).toBe(204);

    for (const answer of made) {
      expect((await adminAs(app.url, answer.body.key as string).get("/admin/users")).status).toBe(401);
    }
    expect((await adminAs(app.url, byKey.body.key as string).get("/admin/users")).status).toBe(200);
    expect((await own.admin.get("/admin/users")).status).toBe(200);
    const revoked = await app.sql.query(
      "SELECT id FROM api_keys WHERE tenant_id = $1 AND revoked_at IS NOT NULL",
      [own.tenantId],
    );
    expect(revoked.rows.map((row: { id: string }) => row.id).sort()).toEqual([...mine].sort());
    const attempt = await app.sql.query(
      "SELECT expires_at <= now() AS ended FROM oauth_attempts WHERE api_key_id = $1",
      [mine[0]],
    );
    expect(attempt.rows).toEqual([{ ended: true }]);
    const audit = await app.sql.query(
      "SELECT action, target_id, user_id, details FROM audit_entries WHERE tenant_id = $1 AND action IN ('user.disable', 'api-key.revoke') ORDER BY action, target_id",
      [own.tenantId],
    );
    expect(audit.rows).toEqual([
      ...[...mine].sort().map((id) => ({
        action: "api-key.revoke",
        target_id: id,
        user_id: operator.id,
        details: { createdBy: admin.id, with: "user.disable" },
      })),
      {
        action: "user.disable",
        target_id: admin.id,
        user_id: operator.id,
        details: { revokedKeyIds: expect.arrayContaining(mine) },
      },
    ]);
  });

  it("a session ends after 12 h idle and after 7 days in all", async () => {
    const user = await signedInUser(app.url, { role: "tenant-viewer", tenantId: tenant.tenantId });
    const set = (sql: string) => app.sql.query(`UPDATE sessions SET ${sql} WHERE user_id = $1`, [user.id]);
    await set("last_seen_at = now() - interval '11 hours 59 minutes'");
    expect((await user.get("/admin/users")).status).toBe(200);
    const seen = await app.sql.query(
      "SELECT last_seen_at > now() - interval '1 minute' AS fresh FROM sessions WHERE user_id = $1",
      [user.id],
    );
    expect(seen.rows[0].fresh).toBe(true);
    await set("last_seen_at = now() - interval '12 hours 1 minute'");
    expect((await user.get("/admin/users")).status).toBe(401);

    const fresh = await signIn(app.url, user.email, "correct horse battery staple");
    const get = () => callWithCookie(app.url, fresh.cookie!, "GET", "/console/api/session");
    await set("created_at = now() - interval '6 days 23 hours', last_seen_at = now()");
    expect((await get()).status).toBe(200);
    await set("created_at = now() - interval '7 days 1 minute', last_seen_at = now()");
    expect((await get()).status).toBe(401);
  });

  it("the queue dashboard takes an operator's session for reading; its changes only from Leadgate's origin", async () => {
    const operator = await signedInUser(app.url, { role: "operator" });
    const tenantAdmin = await signedInUser(app.url, { role: "tenant-admin", tenantId: tenant.tenantId });
    const queues = await fetch(`${app.url}/admin/queues/api/queues`, {
      headers: { cookie: operator.cookie },
    });
    expect(queues.status).toBe(200);
    const name = ((await queues.json()) as { queues: { name: string }[] }).queues[0]!.name;
    expect(
      (await fetch(`${app.url}/admin/queues/api/queues`, { headers: { cookie: tenantAdmin.cookie } })).status,
    ).toBe(403);
    const pause = (headers: Record<string, string>) =>
      fetch(`${app.url}/admin/queues/api/queues/${encodeURIComponent(name)}/pause`, {
        method: "PUT",
        headers: { cookie: operator.cookie, ...headers },
      });
    expect((await pause({ origin: "https://evil.example" })).status).toBe(403);
    expect((await pause({ origin: PUBLIC_ORIGIN })).status).toBeLessThan(300);
    await fetch(`${app.url}/admin/queues/api/queues/${encodeURIComponent(name)}/resume`, {
      method: "PUT",
      headers: { cookie: operator.cookie, origin: PUBLIC_ORIGIN },
    });
  });

  it("an invitation is mailed when SMTP_URL is set", async () => {
    const email = uniqueEmail("mailed");
    const created = await tenant.admin.post("/admin/users", { email, role: "tenant-viewer" });
    expect(created.status).toBe(201);
    // Mailed before the answer: the SMTP server has it.
    expect(smtp.to(email)).toHaveLength(1);
    expect(smtp.to(email)[0]!.text).toContain(created.body.invitation.url);
  });
});

describe("admin rate limits per user", () => {
  const app = useApp({
    env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY, TRUST_PROXY: "127.0.0.1", ADMIN_RATE_LIMIT: "8" },
  });

  it("a user's session is limited to ADMIN_RATE_LIMIT a minute as a key is; other callers are not affected", async () => {
    const user = await signedInUser(app.url, { role: "operator" });
    const other = await signedInUser(app.url, { role: "operator" });
    // signedInUser used the bootstrap key twice per user: the user's own budget is untouched.
    for (let i = 0; i < 8; i++) expect((await user.get("/admin/users")).status).toBe(200);
    const refused = await user.get("/admin/users");
    expect([refused.status, refused.body.error, refused.headers.get("retry-after")]).toEqual([
      429,
      "rate_limited",
      expect.stringMatching(/^\d+$/),
    ]);
    expect((await other.get("/admin/users")).status).toBe(200);
  });
});
