// Clients (api.md "Clients"): the businesses a tenant serves, between the tenant and its connections.
// Inheritance over three levels with its `source`, a connection moved to another client, what each
// caller may see (404 for another tenant's client, in paths and bodies), 409 client_in_use, the cap,
// every validation error writing nothing, and ?clientId on the lists and the report.
import { randomBytes } from "node:crypto";
import { adminAs, createTenant, OPERATOR_KEY } from "../support/admin.js";
import { fixture } from "../support/fixtures.js";
import { post } from "../support/http.js";
import { useApp } from "../support/harness.js";

const HOURS = { timezone: "America/Chicago", weekly: { mon: [["08:00", "18:00"]] } };
const REPLY = { enabled: true, text: "Hi {{lead.firstName|there}}, thanks for asking." };

describe("admin API: clients", () => {
  const app = useApp({
    env: {
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      MAX_CLIENTS_PER_TENANT: "4",
      // OAuth set up, so that its start gets as far as the client (the provider is never called).
      THUMBTACK_OAUTH_CLIENT_ID: "tt-client",
      THUMBTACK_OAUTH_CLIENT_SECRET: "tt-secret",
    },
  });
  const operator = () => adminAs(app.url, OPERATOR_KEY);

  const thumbtack = (clientId?: string, settings?: object) => ({
    provider: "thumbtack",
    externalAccountId: `7${randomBytes(8).readBigUInt64BE().toString().padStart(17, "0").slice(0, 17)}`,
    displayName: "Roof line",
    inboundAuth: { type: "basic" },
    ...(clientId ? { clientId } : {}),
    ...(settings ? { settings } : {}),
  });
  /** Everything a client route may write: a refused request leaves all of it as it was. */
  const snapshot = async () =>
    (
      await app.sql.query<Record<string, unknown>>(
        `SELECT (SELECT json_agg(c ORDER BY id) FROM clients c) AS clients,
                (SELECT json_agg(json_build_object('id', id, 'client', client_id) ORDER BY id) FROM connections) AS connections,
                (SELECT count(*)::int FROM audit_entries) AS audit`,
      )
    ).rows[0]!;

  it("a tenant starts with one client named after it, in the zone of its hours; its connections belong to it", async () => {
    const tenant = await createTenant(app.url, "Hometown Agency");
    const clients = await tenant.admin.get("/admin/clients");
    expect(clients.status).toBe(200);
    expect(clients.body.items).toEqual([
      expect.objectContaining({
        tenantId: tenant.tenantId,
        name: "Hometown Agency",
        timezone: "UTC",
        defaults: {},
        branding: {},
      }),
    ]);
    const created = await tenant.admin.post("/admin/connections", thumbtack());
    expect(created.status).toBe(201);
    expect(created.body.connection.clientId).toBe(clients.body.items[0].id);
  });

  it("settings inherit tenant → client → connection, field by field; null returns each to inheriting", async () => {
    const tenant = await createTenant(app.url);
    expect(
      (
        await tenant.admin.patch(`/admin/tenants/${tenant.tenantId}`, {
          defaults: { autoResponse: REPLY, responseTarget: { seconds: 900 } },
        })
      ).status,
    ).toBe(200);
    const roofer = await tenant.admin.post("/admin/clients", {
      name: "Roofer",
      defaults: { businessHours: HOURS },
    });
    expect(roofer.status).toBe(201);
    expect(roofer.body.client).toMatchObject({
      name: "Roofer",
      timezone: "UTC",
      defaults: { businessHours: HOURS },
    });
    const clientId = roofer.body.client.id as string;
    const made = await tenant.admin.post("/admin/connections", thumbtack(clientId));
    expect(made.status).toBe(201);
    const id = made.body.connection.id as string;
    const effective = async () =>
      (await tenant.admin.get(`/admin/connections/${id}`)).body.effectiveSettings as unknown;

    expect(await effective()).toEqual({
      autoResponse: REPLY,
      businessHours: HOURS,
      responseTarget: { seconds: 900 },
      source: { autoResponse: "tenant", businessHours: "client", responseTarget: "tenant" },
    });
    // The client overrides the tenant's target; the connection then overrides the client's.
    expect(
      (
        await tenant.admin.patch(`/admin/clients/${clientId}`, {
          defaults: { responseTarget: { seconds: 600 } },
        })
      ).status,
    ).toBe(200);
    expect(await effective()).toMatchObject({
      responseTarget: { seconds: 600 },
      source: { responseTarget: "client" },
    });
    expect(
      (
        await tenant.admin.patch(`/admin/connections/${id}`, {
          settings: { responseTarget: { seconds: 120 } },
        })
      ).status,
    ).toBe(200);
    expect(await effective()).toMatchObject({
      responseTarget: { seconds: 120 },
      source: { responseTarget: "connection" },
    });
    // null: back to the client's, then (client null) back to the tenant's.
    expect(
      (await tenant.admin.patch(`/admin/connections/${id}`, { settings: { responseTarget: null } })).status,
    ).toBe(200);
    expect(await effective()).toMatchObject({
      responseTarget: { seconds: 600 },
      source: { responseTarget: "client" },
    });
    expect(
      (
        await tenant.admin.patch(`/admin/clients/${clientId}`, {
          defaults: { responseTarget: null, businessHours: null },
        })
      ).status,
    ).toBe(200);
    expect(await effective()).toEqual({
      autoResponse: REPLY,
      businessHours: null,
      responseTarget: { seconds: 900 },
      source: { autoResponse: "tenant", businessHours: "default", responseTarget: "tenant" },
    });
    const stored = await app.sql.query(`SELECT defaults FROM clients WHERE id = $1`, [clientId]);
    expect(stored.rows[0].defaults).toEqual({});
  });

  it("a connection moved to another client picks up that client's defaults; the move is audited", async () => {
    const tenant = await createTenant(app.url);
    const plumber = (
      await tenant.admin.post("/admin/clients", {
        name: "Plumber",
        defaults: { responseTarget: { seconds: 240 } },
      })
    ).body.client;
    const made = await tenant.admin.post("/admin/connections", thumbtack());
    const id = made.body.connection.id as string;
    expect(made.body.connection.effectiveSettings.source.responseTarget).toBe("default");
    const moved = await tenant.admin.patch(`/admin/connections/${id}`, { clientId: plumber.id });
    expect(moved.status).toBe(200);
    expect(moved.body.connection).toMatchObject({
      clientId: plumber.id,
      effectiveSettings: { responseTarget: { seconds: 240 }, source: { responseTarget: "client" } },
    });
    const audit = await app.sql.query(
      `SELECT details FROM audit_entries WHERE target_id = $1 AND action = 'connection.update'`,
      [id],
    );
    expect(audit.rows.map((row) => row.details as unknown)).toEqual([{ fields: ["clientId"] }]);
    // ?clientId on the connections list.
    const listed = await tenant.admin.get(`/admin/connections?clientId=${plumber.id}`);
    expect(listed.body.items.map((item: { id: string }) => item.id)).toEqual([id]);
  });

  it("?clientId narrows the leads list and the speed-to-lead report to that client's connections", async () => {
    const tenant = await createTenant(app.url);
    const roofer = (await tenant.admin.post("/admin/clients", { name: "Roofer" })).body.client.id as string;
    const plumber = (await tenant.admin.post("/admin/clients", { name: "Plumber" })).body.client.id as string;
    const roof = (await tenant.admin.post("/admin/connections", thumbtack(roofer))).body.connection
      .id as string;
    const pipe = (await tenant.admin.post("/admin/connections", thumbtack(plumber))).body.connection
      .id as string;
    // Leads as lead-upsert stores them (the ingest path is tested elsewhere): 2 of the roofer's, 1 of the plumber's.
    for (const [connectionId, name] of [
      [roof, "Rita"],
      [roof, "Ron"],
      [pipe, "Pia"],
    ] as const) {
      await app.sql.query(
        `INSERT INTO leads (tenant_id, connection_id, provider, external_lead_id, last_event_at, name, provider_created_at)
         VALUES ($1, $2, 'thumbtack', $3, now(), $4, now() - interval '1 hour')`,
        [tenant.tenantId, connectionId, `lead-${name}`, name],
      );
    }
    const names = async (query: string) =>
      ((await tenant.admin.get(`/admin/leads${query}`)).body.items as { name: string }[])
        .map((lead) => lead.name)
        .sort();
    expect(await names(`?clientId=${roofer}`)).toEqual(["Rita", "Ron"]);
    expect(await names(`?clientId=${plumber}`)).toEqual(["Pia"]);
    expect(await names(`?clientId=${plumber}&connectionId=${roof}`)).toEqual([]);
    expect(await names("")).toEqual(["Pia", "Rita", "Ron"]);
    const report = async (clientId: string) => {
      const answer = await tenant.admin.get(`/admin/speed-to-lead?clientId=${clientId}`);
      expect(answer.status).toBe(200);
      return answer.body as { overall: { leads: number }; items: { connectionId: string }[] };
    };
    const ofRoofer = await report(roofer);
    expect(ofRoofer.overall.leads).toBe(2);
    expect(ofRoofer.items.map((row) => row.connectionId)).toEqual([roof]);
    expect((await report(plumber)).overall.leads).toBe(1);
  });

  it("ingest plans a first reply from the client's defaults when neither the connection nor the tenant has one", async () => {
    const tenant = await createTenant(app.url);
    const client = await tenant.admin.post("/admin/clients", {
      name: "Deck builder",
      defaults: { autoResponse: REPLY },
    });
    const made = await tenant.admin.post("/admin/connections", {
      ...thumbtack(client.body.client.id as string),
      externalAccountId: "700000000000000404",
    });
    expect(made.body.connection.effectiveSettings.source.autoResponse).toBe("client");
    const { username, password } = made.body.secrets as { username: string; password: string };
    const answer = await post(
      `${app.url}/webhooks/thumbtack/${made.body.connection.id}`,
      fixture("thumbtack/negotiation-created-v4.json").text,
      { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}` },
    );
    expect(answer.status).toBe(202);
    const { rows } = await app.sql.query(
      `SELECT operation FROM jobs WHERE tenant_id = $1 ORDER BY operation`,
      [tenant.tenantId],
    );
    expect(rows.map((row) => row.operation as string)).toEqual(["initial-response", "lead-upsert"]);
  });

  it("another tenant's client answers 404 in paths and in bodies, and nothing is written", async () => {
    const mine = await createTenant(app.url);
    const theirs = await createTenant(app.url);
    const foreign = (await theirs.admin.get("/admin/clients")).body.items[0].id as string;
    const own = await mine.admin.post("/admin/connections", thumbtack());
    const before = await snapshot();
    for (const answer of [
      await mine.admin.get(`/admin/clients/${foreign}`),
      await mine.admin.patch(`/admin/clients/${foreign}`, { name: "Mine now" }),
      await mine.admin.delete(`/admin/clients/${foreign}`),
      await mine.admin.post("/admin/connections", thumbtack(foreign)),
      await mine.admin.patch(`/admin/connections/${own.body.connection.id}`, { clientId: foreign }),
      await mine.admin.post("/admin/connections/oauth", { ...thumbtack(foreign), provider: "thumbtack" }),
      await mine.admin.get(`/admin/speed-to-lead?clientId=${foreign}`),
    ]) {
      expect([answer.status, answer.body.error]).toEqual([404, "not_found"]);
    }
    expect(await snapshot()).toEqual(before);
    // A list filtered by it is empty, not another tenant's rows.
    expect((await mine.admin.get(`/admin/connections?clientId=${foreign}`)).body.items).toEqual([]);
    expect((await mine.admin.get(`/admin/leads?clientId=${foreign}`)).body.items).toEqual([]);
    // The operator sees both, and names the tenant of a new client.
    expect((await operator().get(`/admin/clients/${foreign}`)).status).toBe(200);
    expect((await operator().get(`/admin/clients?tenantId=${theirs.tenantId}`)).body.items).toHaveLength(1);
    const missing = await operator().post("/admin/clients", { name: "No tenant" });
    expect([missing.status, missing.body.details]).toEqual([
      400,
      { tenantId: [expect.stringContaining("required")] },
    ]);
    const forTheirs = await operator().post("/admin/clients", {
      name: "Electrician",
      tenantId: theirs.tenantId,
    });
    expect([forTheirs.status, forTheirs.body.client.tenantId]).toEqual([201, theirs.tenantId]);
  });

  it("409 client_in_use while a connection is live or for the only client; a deleted client is gone from every route", async () => {
    const tenant = await createTenant(app.url);
    const first = (await tenant.admin.get("/admin/clients")).body.items[0].id as string;
    const only = await tenant.admin.delete(`/admin/clients/${first}`);
    expect([only.status, only.body.error]).toEqual([409, "client_in_use"]);
    const second = (await tenant.admin.post("/admin/clients", { name: "Second" })).body.client.id as string;
    const connection = (await tenant.admin.post("/admin/connections", thumbtack(second))).body.connection
      .id as string;
    const busy = await tenant.admin.delete(`/admin/clients/${second}`);
    expect([busy.status, busy.body.error]).toEqual([409, "client_in_use"]);
    expect((await tenant.admin.delete(`/admin/connections/${connection}`)).status).toBe(204);
    expect((await tenant.admin.delete(`/admin/clients/${second}`)).status).toBe(204);
    expect((await tenant.admin.get(`/admin/clients/${second}`)).status).toBe(404);
    expect((await tenant.admin.get("/admin/clients")).body.items.map((c: { id: string }) => c.id)).toEqual([
      first,
    ]);
    expect((await tenant.admin.post("/admin/connections", thumbtack(second))).status).toBe(404);
    // The disabled connection keeps its client (its history stays the deleted client's).
    const kept = await app.sql.query(`SELECT client_id FROM connections WHERE id = $1`, [connection]);
    expect(kept.rows[0].client_id).toBe(second);
  });

  it("MAX_CLIENTS_PER_TENANT live clients: one more is 422 limit_reached; concurrent creations count each other", async () => {
    const tenant = await createTenant(app.url);
    const answers = await Promise.all(
      [1, 2, 3, 4, 5].map((n) => tenant.admin.post("/admin/clients", { name: `Business ${n}` })),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 201, 201, 422, 422]);
    expect(answers.find((answer) => answer.status === 422)!.body.error).toBe("limit_reached");
    const { rows } = await app.sql.query(`SELECT count(*)::int AS n FROM clients WHERE tenant_id = $1`, [
      tenant.tenantId,
    ]);
    expect(rows[0].n).toBe(4);
  });

  it("every invalid field is 400 validation_failed and writes nothing", async () => {
    const tenant = await createTenant(app.url);
    const id = (await tenant.admin.get("/admin/clients")).body.items[0].id as string;
    const before = await snapshot();
    for (const [body, field] of [
      [{}, "name"],
      [{ name: "" }, "name"],
      [{ name: "x".repeat(201) }, "name"],
      [{ name: "Ok", timezone: "Mars/Olympus" }, "timezone"],
      [{ name: "Ok", timezone: "+05:30" }, "timezone"],
      [{ name: "Ok", branding: { logoUrl: "http://logo.example/a.png" } }, "branding.logoUrl"],
      [{ name: "Ok", branding: { accentColor: "red" } }, "branding.accentColor"],
      [
        { name: "Ok", defaults: { businessHours: { timezone: "UTC", weekly: { funday: [] } } } },
        "defaults.businessHours.weekly.funday",
      ],
      [
        {
          name: "Ok",
          defaults: { autoResponse: { ...REPLY, delaySeconds: 400 }, responseTarget: { seconds: 300 } },
        },
        "defaults.autoResponse.delaySeconds",
      ],
    ] as const) {
      const created = await tenant.admin.post("/admin/clients", body);
      expect([created.status, created.body.error, Object.keys(created.body.details ?? {})]).toEqual([
        400,
        "validation_failed",
        [field],
      ]);
      if (!("name" in body) || body.name !== "Ok") continue;
      const { name: _name, ...changes } = body;
      const patched = await tenant.admin.patch(`/admin/clients/${id}`, changes);
      expect([patched.status, Object.keys(patched.body.details ?? {})]).toEqual([400, [field]]);
    }
    expect(await snapshot()).toEqual(before);
  });

  it("branding and time zone are stored and shown; null removes a branding field", async () => {
    const tenant = await createTenant(app.url);
    const made = await tenant.admin.post("/admin/clients", {
      name: "Acme Roofing",
      timezone: "America/Denver",
      branding: { displayName: "Acme", logoUrl: "https://cdn.acme.example/logo.png", accentColor: "#1a73e8" },
    });
    expect(made.body.client).toMatchObject({
      timezone: "America/Denver",
      branding: { displayName: "Acme", logoUrl: "https://cdn.acme.example/logo.png", accentColor: "#1a73e8" },
    });
    const patched = await tenant.admin.patch(`/admin/clients/${made.body.client.id}`, {
      name: "Acme Roofing & Gutters",
      branding: { logoUrl: null, accentColor: "#000000" },
    });
    expect(patched.body.client).toMatchObject({
      name: "Acme Roofing & Gutters",
      branding: { displayName: "Acme", accentColor: "#000000" },
    });
    expect(patched.body.client.branding).not.toHaveProperty("logoUrl");
  });
});
