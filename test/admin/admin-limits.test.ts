// Admin work cannot starve ingest. Each API key has its own budget of admin requests
// (ADMIN_RATE_LIMIT per minute, then 429 + Retry-After), and admin queries run on their own small
// database pool, so admin requests stuck in the database leave ingest its connections.
// A tenant cannot multiply its budget by minting keys: its keys share
// ADMIN_TENANT_RATE_LIMIT, and it has at most MAX_API_KEYS_PER_TENANT active keys.
import pg from "pg";
import { adminAs, createTenant, OPERATOR_KEY, staticFormsDelivery } from "../support/admin.js";
import { useApp } from "../support/harness.js";
import { post } from "../support/http.js";
import { waitFor } from "../support/wait.js";
import { ADMIN_POOL } from "../../src/database/prisma.service.js";

describe("admin rate limit per API key", () => {
  const app = useApp({ env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY, ADMIN_RATE_LIMIT: "5" } });

  it("answers 429 rate_limited with Retry-After past the key's limit, writes nothing, and leaves other keys alone", async () => {
    const a = await createTenant(app.url);
    const b = await createTenant(app.url);
    for (let i = 0; i < 5; i++) expect((await a.admin.get("/admin/audit")).status).toBe(200);

    const refused = await a.admin.post("/admin/api-keys", { name: "one too many", role: "tenant-admin" });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: "rate_limited", message: expect.any(String) });
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const keys = await app.sql.query("SELECT name FROM api_keys WHERE tenant_id = $1", [a.tenantId]);
    expect(keys.rows.map((row: { name: string }) => row.name)).not.toContain("one too many");

    expect((await b.admin.get("/admin/audit")).status).toBe(200);
  });
});

describe("admin rate limit per tenant, across its keys", () => {
  const app = useApp({
    env: {
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      ADMIN_RATE_LIMIT: "5",
      ADMIN_TENANT_RATE_LIMIT: "8",
    },
  });

  it("a tenant's keys share ADMIN_TENANT_RATE_LIMIT: 429 rate_limited past it although each key is within its own; other tenants and operator keys unaffected", async () => {
    const a = await createTenant(app.url);
    const b = await createTenant(app.url);
    const extra = await a.admin.post("/admin/api-keys", { name: "second", role: "tenant-admin" }); // a's 1st request
    expect(extra.status).toBe(201);
    const second = adminAs(app.url, extra.body.key as string);
    for (let i = 0; i < 3; i++) expect((await a.admin.get("/admin/audit")).status).toBe(200); // a: 4
    for (let i = 0; i < 4; i++) expect((await second.get("/admin/audit")).status).toBe(200); // a: 8

    const refused = await second.post("/admin/api-keys", { name: "one too many", role: "tenant-admin" });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ error: "rate_limited", message: expect.any(String) });
    expect(refused.body.message).toContain("tenant");
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const keys = await app.sql.query("SELECT name FROM api_keys WHERE tenant_id = $1", [a.tenantId]);
    expect(keys.rows.map((row: { name: string }) => row.name)).not.toContain("one too many");
    expect((await a.admin.get("/admin/audit")).status).toBe(429); // a's first key is within its own 5

    expect((await b.admin.get("/admin/audit")).status).toBe(200);
    // Operator keys are the platform's, not a tenant's: they count against their own key budget only
    // (5, of which creating the two tenants used 2).
    for (let i = 0; i < 3; i++)
      expect((await app.operator.get(`/admin/tenants/${a.tenantId}`)).status).toBe(200);
  });
});

describe("active API keys per tenant", () => {
  const app = useApp({
    env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY, MAX_API_KEYS_PER_TENANT: "4" },
  });
  const active = async (tenantId: string) =>
    (
      await app.sql.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM api_keys WHERE tenant_id = $1 AND revoked_at IS NULL",
        [tenantId],
      )
    ).rows[0]!.n;
  const audits = async (tenantId: string) =>
    (
      await app.sql.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM audit_entries WHERE tenant_id = $1 AND action = 'api-key.create'",
        [tenantId],
      )
    ).rows[0]!.n;

  it("one more than MAX_API_KEYS_PER_TENANT is 422 limit_reached, nothing written; a revoked key frees its place", async () => {
    const tenant = await createTenant(app.url); // its first key
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await tenant.admin.post("/admin/api-keys", { name: `k${i}`, role: "tenant-admin" });
      expect(created.status).toBe(201);
      made.push(created.body.id as string);
    }
    const auditsBefore = await audits(tenant.tenantId);
    for (const [admin, tenantId] of [
      [tenant.admin, undefined],
      [app.operator, tenant.tenantId],
    ] as const) {
      const refused = await admin.post("/admin/api-keys", { name: "fifth", role: "tenant-admin", tenantId });
      expect([refused.status, refused.body.error]).toEqual([422, "limit_reached"]);
      expect(refused.body.message).toEqual(expect.any(String));
      expect(refused.text).not.toMatch(/lg_[0-9a-f]{12}_/);
    }
    expect([await active(tenant.tenantId), await audits(tenant.tenantId)]).toEqual([4, auditsBefore]);

    expect((await tenant.admin.delete(`/admin/api-keys/${made[0]!}`)).status).toBe(204);
    expect((await tenant.admin.post("/admin/api-keys", { name: "fifth", role: "tenant-admin" })).status).toBe(
      201,
    );
    expect(await active(tenant.tenantId)).toBe(4);
    // Operator keys belong to no tenant: the cap does not apply to them.
    expect((await app.operator.post("/admin/api-keys", { name: "ops", role: "operator" })).status).toBe(201);
  });

  it("concurrent creations cannot pass the cap: the database decides", async () => {
    const tenant = await createTenant(app.url);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        app.operator.post("/admin/api-keys", {
          name: `race${i}`,
          role: "tenant-admin",
          tenantId: tenant.tenantId,
        }),
      ),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([...Array(3).fill(201), ...Array(9).fill(422)]);
    expect(await active(tenant.tenantId)).toBe(4);
  });
});

describe("connections per tenant", () => {
  const app = useApp({
    env: {
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      MAX_CONNECTIONS_PER_TENANT: "3",
      YELP_OAUTH_CLIENT_ID: "leadgate-yelp",
      YELP_OAUTH_CLIENT_SECRET: "yelp-client-secret-0123456789",
    },
  });
  let forms = 0;
  const form = (tenantId?: string) => ({
    provider: "staticforms",
    externalAccountId: `form-limit-${++forms}`,
    displayName: "Contact form",
    inboundAuth: { type: "bearer" },
    ...(tenantId ? { tenantId } : {}),
  });
  const live = async (tenantId: string) =>
    (
      await app.sql.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM connections WHERE tenant_id = $1 AND status <> 'disabled'",
        [tenantId],
      )
    ).rows[0]!.n;

  it("one more than MAX_CONNECTIONS_PER_TENANT is 422 limit_reached, nothing written; a disconnected one frees its place", async () => {
    const tenant = await createTenant(app.url);
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await tenant.admin.post("/admin/connections", form());
      expect(created.status).toBe(201);
      made.push(created.body.connection.id as string);
    }
    const before = await app.sql.query("SELECT count(*)::int AS n FROM audit_entries WHERE tenant_id = $1", [
      tenant.tenantId,
    ]);
    for (const [admin, tenantId] of [
      [tenant.admin, undefined],
      [app.operator, tenant.tenantId],
    ] as const) {
      const refused = await admin.post("/admin/connections", form(tenantId));
      expect([refused.status, refused.body.error]).toEqual([422, "limit_reached"]);
      expect(refused.body.message).toContain("MAX_CONNECTIONS_PER_TENANT");
    }
    const after = await app.sql.query("SELECT count(*)::int AS n FROM audit_entries WHERE tenant_id = $1", [
      tenant.tenantId,
    ]);
    expect([await live(tenant.tenantId), after.rows[0].n]).toEqual([3, before.rows[0].n]);
    // Connecting by OAuth at the cap is refused before the owner is sent to the provider.
    const attempts = async () =>
      (
        await app.sql.query("SELECT count(*)::int AS n FROM oauth_attempts WHERE tenant_id = $1", [
          tenant.tenantId,
        ])
      ).rows[0].n as number;
    const oauth = await tenant.admin.post("/admin/connections/oauth", {
      provider: "yelp",
      externalAccountId: "bizAtTheCap",
      displayName: "At the cap",
    });
    expect([oauth.status, oauth.body.error, await attempts()]).toEqual([422, "limit_reached", 0]);

    expect((await tenant.admin.delete(`/admin/connections/${made[0]!}`)).status).toBeLessThan(300);
    expect((await tenant.admin.post("/admin/connections", form())).status).toBe(201);
    expect(await live(tenant.tenantId)).toBe(3);
  });

  it("concurrent creations cannot pass the cap: the database decides", async () => {
    const tenant = await createTenant(app.url);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => app.operator.post("/admin/connections", form(tenant.tenantId))),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([
      ...Array(3).fill(201),
      ...Array(7).fill(422),
    ]);
    expect(await live(tenant.tenantId)).toBe(3);
  });
});

describe("admin database pool", () => {
  const app = useApp({ env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY } });

  it("admin queries stuck in the database do not hold the connections ingest needs", async () => {
    const c = await app.createConnection({ provider: "staticforms", inboundAuth: { type: "bearer" } });
    const tenant = await createTenant(app.url);
    // Every admin audit query now waits on this lock: more of them than the main pool has connections.
    const locker = new pg.Client({ connectionString: app.db.url });
    await locker.connect();
    await locker.query("BEGIN");
    await locker.query("LOCK TABLE audit_entries IN ACCESS EXCLUSIVE MODE");
    const stuck = Array.from({ length: 12 }, () => tenant.admin.get("/admin/audit"));
    try {
      // The admin pool is exhausted: each of its connections runs an audit query waiting on the lock.
      await waitFor(
        async () =>
          (
            await app.sql.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database()
                 AND wait_event_type = 'Lock' AND query ILIKE '%audit_entries%'`,
            )
          ).rows[0]!.n,
        (n) => n >= ADMIN_POOL.max,
      );
      const started = Date.now();
      const delivery = await post(
        `${app.url}/webhooks/staticforms/${c.connectionId}`,
        staticFormsDelivery(),
        { authorization: `Bearer ${c.secrets.bearerToken}` },
      );
      expect(delivery.status).toBe(202);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await locker.query("ROLLBACK");
      await locker.end();
      await Promise.all(stuck);
    }
  }, 30_000);
});
