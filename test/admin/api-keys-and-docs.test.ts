// API keys (hashed, revocable, last-used, bootstrap operator key, roles) and the OpenAPI document.
import { readFileSync } from "node:fs";
import { Validator } from "@seriousme/openapi-schema-validator";
import { adminAs, createTenant, OPERATOR_KEY } from "../support/admin.js";
import { startApi, testConfig } from "../support/app.js";
import { createTestDatabase } from "../support/database.js";
import { useApp } from "../support/harness.js";

/** Every route of api.md's tables, as `METHOD /path/{}` (parameters unnamed). */
function routesOfApiMd(): string[] {
  const text = readFileSync(new URL("../../docs/api.md", import.meta.url), "utf8");
  const routes: string[] = [];
  let previous: { method: string; path: string } | undefined;
  for (const line of text.split("\n").filter((l) => l.startsWith("| `"))) {
    const cell = line.split("|")[1]!;
    for (const [, method, path] of cell.matchAll(
      /`(?:(GET|POST|PATCH|DELETE|PUT)\s+)?(\/[A-Za-z0-9/{}_-]*)/g,
    )) {
      let route: { method: string; path: string };
      if (method) route = { method, path: path! };
      else if (previous && path!.split("/").length === 2) {
        // "`POST /admin/connections/{id}/pause` / `/resume`": a sibling of the previous route.
        route = { method: previous.method, path: previous.path.replace(/\/[^/]+$/, path!) };
      } else route = { method: "GET", path: path! };
      routes.push(`${route.method} ${route.path.replace(/\{[^}]+\}/g, "{}")}`);
      previous = route;
    }
  }
  return [...new Set(routes)];
}

describe("admin API: keys and documentation", () => {
  const app = useApp({ env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY } });
  const operator = () => app.operator;

  it("the bootstrap operator key exists once, stored as a hash, and a restart does not duplicate it", async () => {
    const rows = async () =>
      (
        await app.sql.query<{ role: string; tenant_id: string | null }>(
          "SELECT role, tenant_id, prefix, key_hash FROM api_keys WHERE role = 'operator'",
        )
      ).rows;
    const [row] = await rows();
    expect(row).toMatchObject({ role: "operator", tenant_id: null });
    expect(JSON.stringify(row)).not.toContain(OPERATOR_KEY);
    const again = await app.startApi();
    await again.close();
    expect(await rows()).toHaveLength(1);
    expect((await operator().get("/admin/tenants")).status).toBe(200);
  });

  it("a new bootstrap key revokes the older one; a replica restarting with the old key does not take it back", async () => {
    const own = await createTestDatabase();
    const boot = async (key: string) => {
      const app = await startApi(testConfig(own.url, { LEADGATE_BOOTSTRAP_OPERATOR_KEY: key }));
      await app.close();
    };
    const status = async (key: string) => {
      const app = await startApi(testConfig(own.url));
      try {
        return (await adminAs(app.url, key).get("/admin/tenants")).status;
      } finally {
        await app.close();
      }
    };
    const [first, second] = ["bootstrap-key-first-0123456789abcdef", "bootstrap-key-second-0123456789abcdef"];
    try {
      await boot(first);
      expect(await status(first)).toBe(200);
      // An operator's own key is not a bootstrap key: rotating the bootstrap key leaves it alone.
      const app = await startApi(testConfig(own.url));
      const created = await adminAs(app.url, first).post("/admin/api-keys", {
        name: "ops",
        role: "operator",
      });
      await app.close();
      expect(created.status).toBe(201);
      const ops = (created.body as { key: string }).key;

      await boot(second);
      expect([await status(first), await status(second), await status(ops)]).toEqual([401, 200, 200]);
      await boot(first);
      expect([await status(first), await status(second)]).toEqual([401, 200]);
      // A tenant-admin key given as the bootstrap value stays what it is, and revokes nothing.
      const api = await startApi(testConfig(own.url));
      const tenant = await adminAs(api.url, second).post("/admin/tenants", { name: "agency" });
      await api.close();
      await boot((tenant.body as { apiKey: { key: string } }).apiKey.key);
      expect(await status(second)).toBe(200);
      const { rows } = await own.sql.query(
        "SELECT role, bootstrap, revoked_at IS NOT NULL AS revoked FROM api_keys ORDER BY created_at",
      );
      expect(rows).toEqual([
        { role: "operator", bootstrap: true, revoked: true },
        { role: "operator", bootstrap: false, revoked: false },
        { role: "operator", bootstrap: true, revoked: false },
        { role: "tenant-admin", bootstrap: false, revoked: false },
      ]);
    } finally {
      await own.drop();
    }
  });

  it("keys are shown once, stored hashed, record their last use, and stop working when revoked", async () => {
    const tenant = await createTenant(app.url);
    const created = await tenant.admin.post("/admin/api-keys", { name: "reporting", role: "tenant-admin" });
    expect(created.status).toBe(201);
    const { id, key } = created.body as { id: string; key: string };
    expect(key).toMatch(/^lg_[0-9a-f]{12}_/);
    const stored = await app.sql.query("SELECT * FROM api_keys WHERE id = $1", [id]);
    expect(JSON.stringify(stored.rows)).not.toContain(key.slice(16));
    expect(stored.rows[0]).toMatchObject({
      tenant_id: tenant.tenantId,
      role: "tenant-admin",
      last_used_at: null,
    });

    expect((await adminAs(app.url, key).get("/admin/connections")).status).toBe(200);
    const used = await app.sql.query("SELECT last_used_at FROM api_keys WHERE id = $1", [id]);
    expect(used.rows[0].last_used_at).toBeInstanceOf(Date);
    const listed = await tenant.admin.get("/admin/api-keys");
    expect(listed.body.items.map((item: { id: string }) => item.id)).toContain(id);
    expect(listed.text).not.toContain(key);

    expect((await tenant.admin.delete(`/admin/api-keys/${id}`)).status).toBe(204);
    const refused = await adminAs(app.url, key).get("/admin/connections");
    expect([refused.status, refused.body.error]).toEqual([401, "unauthorized"]);
    const audit = await app.sql.query(
      "SELECT action, api_key_id FROM audit_entries WHERE target_id = $1 ORDER BY created_at",
      [id],
    );
    expect(audit.rows).toEqual([
      { action: "api-key.create", api_key_id: tenant.keyId },
      { action: "api-key.revoke", api_key_id: tenant.keyId },
    ]);
  });

  it("roles: tenant-admins create only their own tenant's tenant-admin keys; operators name the tenant", async () => {
    const tenant = await createTenant(app.url);
    const other = await createTenant(app.url);
    const before = (await app.sql.query("SELECT count(*)::int AS n FROM api_keys")).rows[0].n;
    const asOperatorKey = await tenant.admin.post("/admin/api-keys", { name: "x", role: "operator" });
    expect([asOperatorKey.status, asOperatorKey.body.error]).toEqual([403, "forbidden"]);
    const elsewhere = await tenant.admin.post("/admin/api-keys", {
      name: "x",
      role: "tenant-admin",
      tenantId: other.tenantId,
    });
    expect(elsewhere.status).toBe(404);
    const noTenant = await operator().post("/admin/api-keys", { name: "x", role: "tenant-admin" });
    expect([noTenant.status, Object.keys(noTenant.body.details)]).toEqual([400, ["tenantId"]]);
    const badRole = await operator().post("/admin/api-keys", { name: "x", role: "root" });
    expect([badRole.status, Object.keys(badRole.body.details)]).toEqual([400, ["role"]]);
    const unknownTenant = await operator().post("/admin/api-keys", {
      name: "x",
      role: "tenant-admin",
      tenantId: "00000000-0000-4000-8000-000000000000",
    });
    expect(unknownTenant.status).toBe(404);
    expect((await app.sql.query("SELECT count(*)::int AS n FROM api_keys")).rows[0].n).toBe(before);

    const made = await operator().post("/admin/api-keys", { name: "ops 2", role: "operator" });
    expect(made.status).toBe(201);
    expect(
      (await adminAs(app.url, made.body.key).get("/admin/tenants")).body.items.length,
    ).toBeGreaterThanOrEqual(2);
    const own = await tenant.admin.get("/admin/tenants");
    expect(own.body.items.map((t: { id: string }) => t.id)).toEqual([tenant.tenantId]);
    expect((await tenant.admin.delete(`/admin/api-keys/${made.body.id}`)).status).toBe(404);
  });

  it("/docs-json is a valid OpenAPI 3 document listing every route of api.md; /docs serves the UI", async () => {
    const document = (await (await fetch(`${app.url}/docs-json`)).json()) as {
      openapi: string;
      paths: object;
    };
    const validation = await new Validator().validate(document);
    expect(validation.errors ?? []).toEqual([]);
    expect(validation.valid).toBe(true);
    expect(document.openapi).toMatch(/^3\./);
    const documented = new Set(
      Object.entries(document.paths as Record<string, object>).flatMap(([path, operations]) =>
        Object.keys(operations).map(
          (method) => `${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, "{}")}`,
        ),
      ),
    );
    const contract = routesOfApiMd();
    expect(contract.length).toBeGreaterThanOrEqual(30);
    expect(contract.filter((route) => !documented.has(route))).toEqual([]);
    const ui = await fetch(`${app.url}/docs`);
    expect([ui.status, ui.headers.get("content-type")]).toEqual([200, expect.stringContaining("text/html")]);
  });

  it("/docs-json gives every webhook delivery route api.md's answers (they are plain Fastify routes, documented by hand)", async () => {
    const document = (await (await fetch(`${app.url}/docs-json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    // api.md's answers, and the router's 414 and an unexpected error's 500 (src/observability/openapi-responses.ts).
    const answers = ["200", "202", "400", "401", "404", "410", "413", "414", "415", "429", "500", "503"];
    for (const path of [
      "/webhooks/staticforms/{connectionId}",
      "/webhooks/thumbtack/{connectionId}",
      "/webhooks/yelp/{token}",
    ]) {
      expect([path, Object.keys(document.paths[path]?.post?.responses ?? {}).sort()]).toEqual([
        path,
        answers,
      ]);
    }
    expect(Object.keys(document.paths["/webhooks/yelp/{token}"]?.get?.responses ?? {}).sort()).toEqual([
      "200",
      "400",
      "401",
      "414",
      "429",
      "500",
      "503",
    ]);
  });
});
