// Issue 12 §2: admin work cannot starve ingest. Each API key has its own budget of admin requests
// (ADMIN_RATE_LIMIT per minute, then 429 + Retry-After), and admin queries run on their own small
// database pool, so admin requests stuck in the database leave ingest its connections.
import pg from "pg";
import { createTenant, OPERATOR_KEY, staticFormsDelivery } from "../support/admin.js";
import { useApp } from "../support/harness.js";
import { post } from "../support/http.js";

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
      await new Promise((resolve) => setTimeout(resolve, 500));
      const started = Date.now();
      const delivery = await post(
        `${app.url}/webhooks/staticforms/${c.connectionId}`,
        staticFormsDelivery(),
        { authorization: `Bearer ${c.secrets.bearerToken}` },
      );
      expect(delivery.status).toBe(202);
      expect(Date.now() - started).toBeLessThan(1_500);
    } finally {
      await locker.query("ROLLBACK");
      await locker.end();
      await Promise.all(stuck);
    }
  }, 30_000);
});
