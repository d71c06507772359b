// A webhook or CRM URL may carry a token in its query string (`?key=…`). Views show such
// URLs with the query string masked (`https://hooks.example/x?…`), in channel views and in
// connection views' CRM URL; the calls still go to the full URL. A PATCH (or a creation) never
// accepts a masked value shown in a view: 400 validation_failed, nothing written.
import { createTenant, OPERATOR_KEY, staticFormsDelivery } from "../support/admin.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import { waitFor } from "../support/wait.js";

const SECRET = "s3cr3t-query-token";

describe("URLs with a query string are masked in views", () => {
  const receiver = useFakeServer({ status: 204 });
  const app = useApp({
    worker: true,
    env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY, DISPATCHER_INTERVAL_MS: "300" },
  });

  it("a webhook channel's URL: masked in the creation answer and the list; the test notification goes to the full URL", async () => {
    const tenant = await createTenant(app.url);
    const url = `${receiver.url}/alerts/hook?token=${SECRET}&x=1`;
    const created = await tenant.admin.post("/admin/notification-channels", { type: "webhook", url });
    expect(created.status).toBe(201);
    expect(created.body.channel.url).toBe(`${receiver.url}/alerts/hook?…`);
    const listed = await tenant.admin.get("/admin/notification-channels");
    expect(listed.body.items.map((c: { url: string }) => c.url)).toEqual([`${receiver.url}/alerts/hook?…`]);
    for (const answer of [
      created,
      listed,
      await app.operator.get("/admin/notification-channels?limit=200"),
    ]) {
      expect(answer.text).not.toContain(SECRET);
    }
    const tested = await tenant.admin.post(`/admin/notification-channels/${created.body.channel.id}/test`);
    expect(tested.status).toBe(200);
    await waitFor(
      () =>
        Promise.resolve(
          receiver.received.filter((r) => r.path.startsWith("/alerts/hook")).map((r) => r.path),
        ),
      (paths) => paths.length === 1,
    );
    expect(receiver.received.find((r) => r.path.startsWith("/alerts/hook"))!.path).toBe(
      `/alerts/hook?token=${SECRET}&x=1`,
    );
    // The masked value is no URL to create a channel with.
    const again = await tenant.admin.post("/admin/notification-channels", {
      type: "webhook",
      url: created.body.channel.url,
    });
    expect([again.status, again.body.error, Object.keys(again.body.details)]).toEqual([
      400,
      "validation_failed",
      ["url"],
    ]);
  });

  it("a connection's CRM URL: masked in every view; a PATCH with the masked value is 400 validation_failed and keeps the URL; deliveries go to the full URL", async () => {
    const tenant = await createTenant(app.url);
    const url = `${receiver.url}/crm/leads?key=${SECRET}`;
    const created = await tenant.admin.post("/admin/connections", {
      provider: "staticforms",
      externalAccountId: "form-masked",
      displayName: "Masked CRM",
      inboundAuth: { type: "bearer" },
      settings: { crmDestination: { url } },
    });
    expect(created.status).toBe(201);
    const id = created.body.connection.id as string;
    const masked = `${receiver.url}/crm/leads?…`;
    const views = [
      created.body.connection,
      (await tenant.admin.get(`/admin/connections/${id}`)).body,
      (await tenant.admin.get("/admin/connections")).body.items[0],
      (await tenant.admin.patch(`/admin/connections/${id}`, { displayName: "Masked CRM, renamed" })).body
        .connection,
    ];
    expect(
      views.map(
        (view: { settings: { crmDestination: { url: string } } }) => view.settings.crmDestination.url,
      ),
    ).toEqual([masked, masked, masked, masked]);
    expect(JSON.stringify(views)).not.toContain(SECRET);

    // A client that sends the settings it read back (masked) is refused, the URL untouched.
    const audits = async () =>
      (
        await app.sql.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM audit_entries WHERE target_id = $1",
          [id],
        )
      ).rows[0]!.n;
    const before = await audits();
    for (const value of [masked, `${receiver.url}/crm/leads?%E2%80%A6`]) {
      const refused = await tenant.admin.patch(`/admin/connections/${id}`, {
        settings: { crmDestination: { url: value } },
      });
      expect([refused.status, refused.body.error, Object.keys(refused.body.details)]).toEqual([
        400,
        "validation_failed",
        ["settings.crmDestination.url"],
      ]);
    }
    const stored = await app.sql.query<{ url: string }>(
      "SELECT settings->'crmDestination'->>'url' AS url FROM connections WHERE id = $1",
      [id],
    );
    expect(stored.rows).toEqual([{ url }]);
    expect(await audits()).toEqual(before);

    const delivered = await post(`${app.url}/webhooks/staticforms/${id}`, staticFormsDelivery(), {
      authorization: `Bearer ${created.body.secrets.bearerToken as string}`,
    });
    expect(delivered.status).toBe(202);
    await waitFor(
      () =>
        Promise.resolve(receiver.received.filter((r) => r.path.startsWith("/crm/leads")).map((r) => r.path)),
      (paths) => paths.length === 1,
    );
    expect(receiver.received.find((r) => r.path.startsWith("/crm/leads"))!.path).toBe(
      `/crm/leads?key=${SECRET}`,
    );
  });
});
