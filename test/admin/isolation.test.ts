// Tenant isolation, roles and authentication, checked over every admin route of the OpenAPI
// document the running API serves (the route table generated from the code), not a hand-picked list:
// a route added later is covered, and one whose ids this test cannot supply fails it.
import { adminAs, createTenant, OPERATOR_KEY, staticFormsDelivery } from "../support/admin.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import { waitFor } from "../support/wait.js";

interface Route {
  method: string;
  path: string;
  operatorOnly: boolean;
}

describe("admin API: isolation matrix over the route table", () => {
  const crm = useFakeServer({ status: 200, body: {} });
  const app = useApp({
    worker: true,
    env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY, DISPATCHER_INTERVAL_MS: "300" },
  });
  let routes: Route[];
  /** Tenant A's ids, by the resource segment of the route that takes them. */
  const idsOfA: Record<string, string> = {};
  let a: Awaited<ReturnType<typeof createTenant>>;
  let b: Awaited<ReturnType<typeof createTenant>>;
  const operator = () => app.operator;

  beforeAll(async () => {
    a = await createTenant(app.url, "Agency A");
    b = await createTenant(app.url, "Agency B");
    // Tenant A gets one of everything: connection, receipt, jobs, lead, conflict, key, replay batch,
    // audit rows, an alert, a notification channel, a user.
    const connection = await a.admin.post("/admin/connections", {
      provider: "staticforms",
      externalAccountId: "form-a",
      displayName: "A's form",
      inboundAuth: { type: "bearer" },
      settings: { crmDestination: { url: `${crm.url}/crm` } },
    });
    expect(connection.status).toBe(201);
    const delivery = staticFormsDelivery("sub_a_1");
    const auth = { authorization: `Bearer ${connection.body.secrets.bearerToken}` };
    const url = `${app.url}/webhooks/staticforms/${connection.body.connection.id}`;
    const accepted = await post(url, delivery, auth);
    expect(accepted.status).toBe(202);
    const changed = { ...delivery, data: { ...delivery.data, formData: { name: "Someone else" } } };
    expect((await post(url, changed, auth)).status).toBe(200); // same key, other digest: a conflict
    const lead = await waitFor(
      () => a.admin.get("/admin/leads"),
      (answer) => answer.body.items.length === 1,
    );
    const jobs = await a.admin.get("/admin/jobs");
    const key = await a.admin.post("/admin/api-keys", { name: "spare", role: "tenant-admin" });
    const batch = await a.admin.post("/admin/replays", { filter: { status: "dead" } });
    expect(batch.status).toBe(202);
    // The conflict opened a payload.conflict alert; a notification channel of A's own.
    const alerts = await a.admin.get("/admin/alerts");
    expect(alerts.body.items.map((alert: { type: string }) => alert.type)).toEqual(["payload.conflict"]);
    const channel = await a.admin.post("/admin/notification-channels", {
      type: "webhook",
      url: `${crm.url}/alerts`,
    });
    expect(channel.status).toBe(201);
    // A console user of A's, invitation not yet accepted (so a new invitation is possible).
    const user = await a.admin.post("/admin/users", {
      email: "viewer@agency-a.example",
      role: "tenant-viewer",
    });
    expect(user.status).toBe(201);
    Object.assign(idsOfA, {
      users: user.body.user.id,
      tenants: a.tenantId,
      clients: (await a.admin.get("/admin/clients")).body.items[0].id,
      "api-keys": key.body.id,
      connections: connection.body.connection.id,
      receipts: accepted.body.receiptIds[0],
      jobs: jobs.body.items[0].id,
      leads: lead.body.items[0].id,
      replays: batch.body.id,
      alerts: alerts.body.items[0].id,
      "notification-channels": channel.body.channel.id,
      // A finished backfill of A's connection (starting one needs a provider API: backfill.test.ts).
      backfills: (
        await app.sql.query<{ id: string }>(
          `INSERT INTO backfills (tenant_id, connection_id, window_from, window_to, status)
           VALUES ($1, $2, now() - interval '1 day', now(), 'done') RETURNING id`,
          [a.tenantId, connection.body.connection.id],
        )
      ).rows[0]!.id,
    });

    const document = (await (await fetch(`${app.url}/docs-json`)).json()) as {
      openapi: string;
      paths: object;
    };
    routes = Object.entries(document.paths as Record<string, Record<string, { "x-roles"?: string[] }>>)
      .filter(([path]) => path.startsWith("/admin/"))
      .flatMap(([path, operations]) =>
        Object.entries(operations).map(([method, operation]) => ({
          method: method.toUpperCase(),
          path,
          operatorOnly: operation["x-roles"]?.includes("operator") ?? false,
        })),
      );
  });

  /** The route with A's id in place of `{id}` (fails for a route whose resource this test does not know). */
  const withIdOfA = (path: string) =>
    path.replace("{id}", () => {
      const resource = path.split("/")[2]!;
      const id = idsOfA[resource];
      if (!id) throw new Error(`no id of tenant A for ${path}: add one to this test`);
      return id;
    });
  /** A body that passes validation (so the answer is about the id): `{}`, or a backfill's window. */
  const bodyFor = (route: Route) =>
    route.path.endsWith("/backfill")
      ? { from: new Date(Date.now() - 86_400_000).toISOString(), to: new Date().toISOString() }
      : route.method === "POST" || route.method === "PATCH"
        ? {}
        : undefined;
  const callAs = (key: string | undefined, route: Route, path = withIdOfA(route.path)) => {
    const admin = adminAs(app.url, key);
    const method = route.method.toLowerCase() as "get" | "post" | "patch" | "delete";
    return method === "get" || method === "delete"
      ? admin[method](path)
      : admin[method](path, bodyFor(route));
  };

  it("the route table has the admin routes of api.md", () => {
    expect(routes.length).toBeGreaterThanOrEqual(25);
    expect(routes.filter((route) => route.path.includes("{id}")).length).toBeGreaterThanOrEqual(14);
  });

  it("tenant B's key on any of tenant A's ids: 404, and nothing of A changes", async () => {
    const answers: Record<string, number> = {};
    for (const route of routes.filter((r) => r.path.includes("{id}") && !r.operatorOnly)) {
      answers[`${route.method} ${route.path}`] = (await callAs(b.key, route)).status;
    }
    expect(Object.entries(answers).filter(([, status]) => status !== 404)).toEqual([]);
    // Every id is real: tenant A itself reads each of them.
    for (const route of routes.filter((r) => r.path.includes("{id}") && r.method === "GET")) {
      expect([route.path, (await callAs(a.key, route)).status]).toEqual([route.path, 200]);
    }
    const connection = await a.admin.get(`/admin/connections/${idsOfA.connections}`);
    expect(connection.body.status).toBe("active");
    const keys = await app.sql.query("SELECT revoked_at FROM api_keys WHERE id = $1", [idsOfA["api-keys"]]);
    expect(keys.rows).toEqual([{ revoked_at: null }]);
    const replays = await app.sql.query(
      "SELECT count(*)::int AS n FROM audit_entries WHERE api_key_id = $1",
      [b.keyId],
    );
    expect(replays.rows).toEqual([{ n: 0 }]); // B's key did nothing at all
  });

  it("no list route returns A's rows to B; A and the operator see them", async () => {
    const aIds = Object.values(idsOfA);
    // The speed-to-lead report, the overview and the jobs summary are figures, not lists of rows (no
    // `limit`): their tenant isolation is asserted in test/admin/speed-to-lead.test.ts and
    // test/admin/console-routes.test.ts. The providers are the installation's, no tenant's rows
    // (test/admin/providers.test.ts).
    const lists = routes.filter(
      (r) =>
        r.method === "GET" &&
        !r.path.includes("{") &&
        r.path !== "/admin/queues" &&
        !["/admin/speed-to-lead", "/admin/overview", "/admin/jobs/summary", "/admin/providers"].includes(
          r.path,
        ),
    );
    expect(lists.length).toBeGreaterThanOrEqual(8);
    for (const route of lists) {
      const path = `${route.path}?limit=200`;
      const asB = await callAs(b.key, route, path);
      expect([route.path, asB.status]).toEqual([route.path, 200]);
      expect([route.path, aIds.filter((id) => asB.text.includes(id))]).toEqual([route.path, []]);
      for (const key of [a.key, OPERATOR_KEY]) {
        const seen = await callAs(key, route, path);
        expect([route.path, aIds.some((id) => seen.text.includes(id))]).toEqual([route.path, true]);
      }
    }
  });

  it("tenant-admin keys get 403 on operator-only routes", async () => {
    const operatorOnly = routes.filter((r) => r.operatorOnly);
    expect(operatorOnly.map((r) => `${r.method} ${r.path}`).sort()).toEqual([
      "GET /admin/queues",
      "POST /admin/tenants",
    ]);
    for (const route of operatorOnly) {
      const answer = await callAs(a.key, route);
      expect([route.path, answer.status, answer.body?.error]).toEqual([route.path, 403, "forbidden"]);
    }
    expect((await operator().get("/admin/queues")).status).toBe(200);
    const tenants = await app.sql.query("SELECT count(*)::int AS n FROM tenants");
    expect(tenants.rows).toEqual([{ n: 2 }]);
  });

  it("no key, an unknown key or a revoked key: 401 on every admin route", async () => {
    const doomed = await operator().post("/admin/api-keys", {
      name: "doomed",
      role: "tenant-admin",
      tenantId: a.tenantId,
    });
    expect((await adminAs(app.url, doomed.body.key).get("/admin/tenants")).status).toBe(200);
    expect((await operator().delete(`/admin/api-keys/${doomed.body.id}`)).status).toBe(204);
    const forged = doomed.body.key.slice(0, -4) + "AAAA";
    for (const key of [undefined, forged, doomed.body.key, "lg_000000000000_" + "x".repeat(43)]) {
      for (const route of routes) {
        const answer = await callAs(key, route);
        expect([route.method, route.path, answer.status]).toEqual([route.method, route.path, 401]);
      }
    }
  });
});
