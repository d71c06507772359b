// The console's report routes (api.md "Console and users"): GET /admin/overview, GET
// /admin/jobs/summary and `?tenantId` on operators' lists, on rows written with SQL: the counts, the
// grouping, tenant isolation (a tenant never sees another's rows, whatever `tenantId` it names) and the
// 400s for bad query values.
import { randomBytes, randomUUID } from "node:crypto";
import { adminAs, createTenant, OPERATOR_KEY } from "../support/admin.js";
import { useApp } from "../support/harness.js";

const HOUR = 3_600_000;

describe("admin API: overview, jobs summary, ?tenantId", () => {
  const app = useApp({ env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY } });
  const operator = () => adminAs(app.url, OPERATOR_KEY);
  let a: Awaited<ReturnType<typeof createTenant>>;
  let b: Awaited<ReturnType<typeof createTenant>>;
  let ca: string;
  let cb: string;

  const connection = async (admin: typeof a.admin) => {
    const answer = await admin.post("/admin/connections", {
      provider: "staticforms",
      externalAccountId: `form-${randomBytes(4).toString("hex")}`,
      displayName: "Contact form",
      inboundAuth: { type: "bearer" },
    });
    expect(answer.status).toBe(201);
    return answer.body.connection.id as string;
  };

  const job = (
    tenantId: string,
    connectionId: string,
    status: string,
    errorCode: string | null,
    ageHours = 1,
  ) =>
    app.sql.query(
      `INSERT INTO jobs (tenant_id, connection_id, operation, job_key, status, max_attempts, last_error_code,
                         created_at, updated_at)
       VALUES ($1, $2, 'crm-delivery', $3, $4, 8, $5, now() - make_interval(hours => $6), now() - make_interval(hours => $6))`,
      [tenantId, connectionId, `test:${randomUUID()}`, status, errorCode, ageHours],
    );

  const lead = (tenantId: string, connectionId: string, ageHours: number) =>
    app.sql.query(
      `INSERT INTO leads (tenant_id, connection_id, provider, external_lead_id, last_event_at, created_at)
       VALUES ($1, $2, 'staticforms', $3, now(), now() - make_interval(hours => $4))`,
      [tenantId, connectionId, randomUUID(), ageHours],
    );

  const alert = (tenantId: string, status: string) =>
    app.sql.query(
      `INSERT INTO alerts (tenant_id, type, status, group_key, summary, resolved_at)
       VALUES ($1, 'job.dead', $2, $3, 'dead jobs', CASE WHEN $2 = 'resolved' THEN now() END)`,
      [tenantId, status, randomUUID()],
    );

  beforeAll(async () => {
    a = await createTenant(app.url);
    b = await createTenant(app.url);
    ca = await connection(a.admin);
    cb = await connection(b.admin);
    await a.admin.post(`/admin/connections/${ca}/pause`);
    // Tenant a: 2 dead http_400, 1 blocked, 1 dead two days old, 1 succeeded; 2 leads today, 1 old.
    await job(a.tenantId, ca, "dead", "http_400");
    await job(a.tenantId, ca, "dead", "http_400", 2);
    await job(a.tenantId, ca, "blocked", "connection_paused");
    await job(a.tenantId, ca, "dead", "http_500", 48);
    await job(a.tenantId, ca, "succeeded", null);
    await lead(a.tenantId, ca, 1);
    await lead(a.tenantId, ca, 3);
    await lead(a.tenantId, ca, 30);
    await alert(a.tenantId, "open");
    await alert(a.tenantId, "resolved");
    // Tenant b: one dead job, one lead, one open alert.
    await job(b.tenantId, cb, "dead", "http_400");
    await lead(b.tenantId, cb, 1);
    await alert(b.tenantId, "open");
  });

  it("overview: a tenant's figures of the last 24 h, its own only", async () => {
    const answer = await a.admin.get("/admin/overview");
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      leads24h: 2,
      receipts24h: 0,
      failed24h: 3,
      openAlerts: 1,
      connections: { total: 1, attention: 1 },
    });
    const ofB = await b.admin.get("/admin/overview");
    expect(ofB.body).toMatchObject({
      leads24h: 1,
      failed24h: 1,
      openAlerts: 1,
      connections: { attention: 0 },
    });
  });

  it("overview: an operator sees one tenant with ?tenantId, every tenant without", async () => {
    expect((await operator().get(`/admin/overview?tenantId=${b.tenantId}`)).body).toMatchObject({
      leads24h: 1,
      failed24h: 1,
    });
    const all = await operator().get("/admin/overview");
    expect(all.body.leads24h).toBeGreaterThanOrEqual(3);
    expect(all.body.failed24h).toBeGreaterThanOrEqual(4);
  });

  it("overview: a tenant naming another tenant sees nothing of it", async () => {
    const answer = await a.admin.get(`/admin/overview?tenantId=${b.tenantId}`);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      leads24h: 0,
      receipts24h: 0,
      failed24h: 0,
      openAlerts: 0,
      connections: { total: 0, attention: 0 },
    });
  });

  it("jobs summary: dead and blocked jobs grouped by connection, operation and error code", async () => {
    const answer = await a.admin.get("/admin/jobs/summary");
    expect(answer.status).toBe(200);
    const groups = answer.body.groups as {
      errorCode: string;
      count: number;
      oldest: string;
      newest: string;
    }[];
    expect(groups.map((g) => [g.errorCode, g.count])).toEqual([
      ["http_400", 2],
      ["connection_paused", 1],
      ["http_500", 1],
    ]);
    expect(groups[0]).toMatchObject({ connectionId: ca, operation: "crm-delivery" });
    expect(Date.parse(groups[0]!.oldest)).toBeLessThan(Date.parse(groups[0]!.newest));
  });

  it("jobs summary: the status, time and connection filters", async () => {
    const blocked = await a.admin.get("/admin/jobs/summary?status=blocked");
    expect(blocked.body.groups).toEqual([
      expect.objectContaining({ errorCode: "connection_paused", count: 1 }),
    ]);
    const from = new Date(Date.now() - 24 * HOUR).toISOString();
    const recent = await a.admin.get(`/admin/jobs/summary?status=dead&from=${from}`);
    expect(recent.body.groups).toEqual([expect.objectContaining({ errorCode: "http_400", count: 2 })]);
    const succeeded = await a.admin.get(`/admin/jobs/summary?status=succeeded&connectionId=${ca}`);
    expect(succeeded.body.groups).toEqual([expect.objectContaining({ errorCode: null, count: 1 })]);
    expect((await a.admin.get(`/admin/jobs/summary?connectionId=${cb}`)).body.groups).toEqual([]);
  });

  it("jobs summary: tenant isolation, and an operator's ?tenantId", async () => {
    expect((await a.admin.get(`/admin/jobs/summary?tenantId=${b.tenantId}`)).body.groups).toEqual([]);
    const ofB = await operator().get(`/admin/jobs/summary?tenantId=${b.tenantId}`);
    expect(ofB.body.groups).toEqual([
      expect.objectContaining({ connectionId: cb, errorCode: "http_400", count: 1 }),
    ]);
  });

  it("?tenantId on operators' lists: leads, jobs, alerts, audit only of that tenant; a tenant gets nothing of another", async () => {
    const lists = ["/admin/leads", "/admin/jobs", "/admin/alerts", "/admin/audit", "/admin/receipts"];
    for (const path of [...lists, "/admin/notification-channels", "/admin/conflicts", "/admin/api-keys"]) {
      const ofB = await operator().get(`${path}?tenantId=${b.tenantId}`);
      expect(ofB.status).toBe(200);
      expect(ofB.body.items.every((row: { tenantId: string }) => row.tenantId === b.tenantId)).toBe(true);
      const foreign = await a.admin.get(`${path}?tenantId=${b.tenantId}`);
      expect([path, foreign.status, foreign.body.items]).toEqual([path, 200, []]);
      const own = await a.admin.get(`${path}?tenantId=${a.tenantId}`);
      expect(own.body.items.every((row: { tenantId: string }) => row.tenantId === a.tenantId)).toBe(true);
    }
    expect((await operator().get(`/admin/leads?tenantId=${b.tenantId}`)).body.items).toHaveLength(1);
    expect((await operator().get(`/admin/alerts?tenantId=${a.tenantId}`)).body.items).toHaveLength(2);
  });

  it.each([
    ["/admin/overview?tenantId=nope", "tenantId"],
    ["/admin/jobs/summary?status=broken", "status"],
    ["/admin/jobs/summary?operation=nothing", "operation"],
    ["/admin/jobs/summary?connectionId=12", "connectionId"],
    ["/admin/jobs/summary?tenantId=12", "tenantId"],
    ["/admin/jobs/summary?from=yesterday", "from"],
    ["/admin/jobs/summary?from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z", "from"],
    ["/admin/jobs/summary?limit=5", "limit"],
    ["/admin/leads?tenantId=x", "tenantId"],
    ["/admin/alerts?tenantId=x", "tenantId"],
  ])("%s ⇒ 400 validation_failed naming %s", async (path, field) => {
    const answer = await a.admin.get(path);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe("validation_failed");
    expect(Object.keys(answer.body.details ?? {})).toContain(field);
  });

  it("both routes need a key", async () => {
    expect((await adminAs(app.url, undefined).get("/admin/overview")).status).toBe(401);
    expect((await adminAs(app.url, undefined).get("/admin/jobs/summary")).status).toBe(401);
  });
});
