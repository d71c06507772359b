// The admin and console APIs' answers carry `Cache-Control: no-store`: the one-time secrets (a new
// tenant's key, a new API key, a rotation's secrets) and every tenant's data stay out of caches.
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { useApp } from "../support/harness.js";

describe("Cache-Control: no-store", () => {
  const app = useApp({ env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY } });

  it("on one-time secrets, admin reads, errors and the console API; not on webhooks or health", async () => {
    const tenant = await createTenant(app.url);
    const created = await app.operator.post("/admin/tenants", { name: "no-store" });
    const key = await tenant.admin.post("/admin/api-keys", { name: "k", role: "tenant-admin" });
    const connection = await tenant.admin.post("/admin/connections", {
      provider: "staticforms",
      externalAccountId: "no-store-form",
      displayName: "Form",
      inboundAuth: { type: "bearer" },
    });
    const rotated = await tenant.admin.post(
      `/admin/connections/${connection.body.connection.id}/rotate-secret`,
      {},
    );
    const list = await tenant.admin.get("/admin/connections");
    const missing = await tenant.admin.get("/admin/connections/00000000-0000-4000-8000-000000000000");
    const session = await fetch(`${app.url}/console/api/session`);
    for (const [name, answer] of [
      ["POST /admin/tenants", created],
      ["POST /admin/api-keys", key],
      ["POST /admin/connections", connection],
      ["rotate-secret", rotated],
      ["GET /admin/connections", list],
      ["404", missing],
    ] as const) {
      expect([name, answer.status < 500, answer.headers.get("cache-control")]).toEqual([
        name,
        true,
        "no-store",
      ]);
    }
    expect(session.headers.get("cache-control")).toBe("no-store");
    const health = await fetch(`${app.url}/health`);
    expect(health.headers.get("cache-control")).not.toBe("no-store");
  });
});
