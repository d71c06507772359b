// Every way a notification channel or an alert request is refused: validation, wrong type/field
// combinations, destinations Leadgate does not call, other tenants' ids, unknown ids.
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { useApp } from "../support/harness.js";

describe("notification channels and alerts: refusals", () => {
  const app = useApp({ env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY } });
  let tenant: Awaited<ReturnType<typeof createTenant>>;
  beforeAll(async () => {
    tenant = await createTenant(app.url);
  });
  const create = (body: unknown) => tenant.admin.post("/admin/notification-channels", body);
  const refused = async (body: unknown, field: string) => {
    const answer = await create(body);
    expect([answer.status, answer.body.error, Object.keys(answer.body.details ?? {})]).toEqual([
      400,
      "validation_failed",
      [field],
    ]);
  };

  it("400 validation_failed: bad type, missing or wrong field for the type, bad types, bad url or address", async () => {
    await refused({ type: "pager", url: "http://127.0.0.1:9/x" }, "type");
    await refused({ url: "http://127.0.0.1:9/x" }, "type");
    await refused({ type: "webhook" }, "url");
    await refused({ type: "slack" }, "url");
    await refused({ type: "webhook", url: "http://127.0.0.1:9/x", address: "a@example.com" }, "address");
    await refused({ type: "email", url: "http://127.0.0.1:9/x", address: "a@example.com" }, "url");
    await refused({ type: "email" }, "address");
    await refused({ type: "webhook", url: "not a url" }, "url");
    await refused({ type: "webhook", url: "ftp://127.0.0.1/x" }, "url");
    await refused({ type: "email", address: "not-an-address" }, "address");
    await refused({ type: "webhook", url: "http://127.0.0.1:9/x", types: ["job.exploded"] }, "types");
    await refused({ type: "webhook", url: "http://127.0.0.1:9/x", types: [] }, "types");
    await refused({ type: "webhook", url: "http://127.0.0.1:9/x", secret: "mine" }, "secret");
    // A tenant-admin cannot make a platform channel (null is not "no tenant").
    await refused({ type: "webhook", url: "http://127.0.0.1:9/x", tenantId: null }, "tenantId");
    // Without SMTP_URL / ALERT_EMAIL_FROM this server cannot send email.
    await refused({ type: "email", address: "ops@agency.example" }, "type");
    expect((await app.sql.query("SELECT 1 FROM notification_channels")).rowCount).toBe(0);
  });

  it("400 destination_forbidden: a URL Leadgate would not call (private range, credentials)", async () => {
    for (const url of [
      "http://10.1.2.3/hook",
      "http://169.254.169.254/latest",
      "http://user:pw@127.0.0.1:9/x",
    ]) {
      const answer = await create({ type: "webhook", url });
      expect([url, answer.status, answer.body.error]).toEqual([url, 400, "destination_forbidden"]);
    }
    const slack = await create({ type: "slack", url: "http://192.168.1.10/services/x" });
    expect([slack.status, slack.body.error]).toEqual([400, "destination_forbidden"]);
    expect((await app.sql.query("SELECT 1 FROM notification_channels")).rowCount).toBe(0);
  });

  it("a tenant-admin's channel is its own tenant's; another tenant's id is 404; an operator's unknown tenant is 404", async () => {
    const own = await create({ type: "webhook", url: "http://127.0.0.1:9/own" });
    expect([own.status, own.body.channel.tenantId]).toEqual([201, tenant.tenantId]);
    const named = await create({ type: "webhook", url: "http://127.0.0.1:9/own", tenantId: tenant.tenantId });
    expect([named.status, named.body.channel.tenantId]).toEqual([201, tenant.tenantId]);
    const other = await createTenant(app.url);
    const foreign = await create({ type: "webhook", url: "http://127.0.0.1:9/x", tenantId: other.tenantId });
    expect([foreign.status, foreign.body.error]).toEqual([404, "not_found"]);
    const unknown = await app.operator.post("/admin/notification-channels", {
      type: "webhook",
      url: "http://127.0.0.1:9/x",
      tenantId: "00000000-0000-4000-8000-000000000000",
    });
    expect([unknown.status, unknown.body.error]).toEqual([404, "not_found"]);
    const forTenant = await app.operator.post("/admin/notification-channels", {
      type: "webhook",
      url: "http://127.0.0.1:9/x",
      tenantId: other.tenantId,
    });
    expect([forTenant.status, forTenant.body.channel.tenantId]).toEqual([201, other.tenantId]);
  });

  it("alerts: bad filters are 400, unknown or malformed ids are 404, and no API key is 401", async () => {
    for (const query of [
      "status=closed",
      "type=job.exploded",
      "connectionId=nope",
      "limit=0",
      "cursor=%21%21",
    ]) {
      const answer = await tenant.admin.get(`/admin/alerts?${query}`);
      expect([query, answer.status, answer.body.error]).toEqual([query, 400, "validation_failed"]);
    }
    const missing = "00000000-0000-4000-8000-000000000000";
    for (const answer of [
      await tenant.admin.get(`/admin/alerts/${missing}`),
      await tenant.admin.get("/admin/alerts/not-a-uuid"),
      await tenant.admin.post(`/admin/alerts/${missing}/acknowledge`),
      await tenant.admin.post(`/admin/alerts/${missing}/resolve`),
      await tenant.admin.delete(`/admin/notification-channels/${missing}`),
      await tenant.admin.post(`/admin/notification-channels/${missing}/test`),
    ]) {
      expect([answer.status, answer.body.error]).toEqual([404, "not_found"]);
    }
    const anonymous = await fetch(`${app.url}/admin/alerts`);
    expect(anonymous.status).toBe(401);
  });
});
