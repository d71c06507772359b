// The clients migration on an existing install: a database at the previous head with tenants,
// connections and leads gets one client per tenant (named after it, in the zone of its default
// hours), every connection points at its tenant's client, no existing row changes, and the API
// started on it answers as before plus the new fields (every setting's source is still the
// connection's, the tenant's or the default). Processes of the previous release keep working
// meanwhile: a tenant they create gets its client, a connection they insert without one gets the
// tenant's first. Applied as `prisma migrate deploy` applies it (statement by statement).
import { adminAs, OPERATOR_KEY } from "../support/admin.js";
import { startApi, testConfig } from "../support/app.js";
import { deploy, deployBefore } from "../support/migrations.js";
import { createEmptyDatabase, type TestDatabase } from "../support/database.js";

const CLIENTS = "20261215000000_clients";

const HOURS = { timezone: "America/New_York", weekly: { mon: [["08:00", "18:00"]] } };

describe("clients migration on an existing install", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createEmptyDatabase();
    await deployBefore(db.url, CLIENTS);
  });
  afterAll(() => db.drop());
  const q = async <T extends object>(text: string, values: unknown[] = []) =>
    (await db.sql.query<T & Record<string, unknown>>(text, values)).rows;

  it("gives each tenant one client and every connection to it, changes no row, and the API answers as before", async () => {
    const [agency] = await q<{ id: string }>(
      `INSERT INTO tenants (name, defaults) VALUES ('Agency', $1) RETURNING id`,
      [JSON.stringify({ businessHours: HOURS, responseTarget: { seconds: 600 } })],
    );
    const [solo] = await q<{ id: string }>(`INSERT INTO tenants (name) VALUES ('Solo Plumber') RETURNING id`);
    const connection = async (tenantId: string, account: string, settings: object, status = "active") =>
      (
        await q<{ id: string }>(
          `INSERT INTO connections (tenant_id, provider, external_account_id, display_name, inbound_auth, settings, status)
           VALUES ($1, 'staticforms', $2, $2, '{"type":"bearer"}', $3, $4) RETURNING id`,
          [tenantId, account, JSON.stringify(settings), status],
        )
      )[0]!.id;
    const own = await connection(agency!.id, "roof-form", { responseTarget: { seconds: 120 } });
    const inheriting = await connection(agency!.id, "gutter-form", {});
    const disabled = await connection(agency!.id, "old-form", {}, "disabled");
    const plumber = await connection(solo!.id, "plumb-form", {});
    for (const [tenantId, connectionId, n] of [
      [agency!.id, own, 1],
      [agency!.id, inheriting, 2],
      [solo!.id, plumber, 3],
    ] as const) {
      await q(
        `INSERT INTO leads (tenant_id, connection_id, provider, external_lead_id, last_event_at, name)
         VALUES ($1, $2, 'staticforms', $3, now(), $4)`,
        [tenantId, connectionId, `lead-${n}`, `Person ${n}`],
      );
    }
    const rows = () =>
      q(
        `SELECT (SELECT json_agg(t ORDER BY id) FROM tenants t) AS tenants,
                (SELECT json_agg(json_build_object('id', id, 'tenant', tenant_id, 'settings', settings, 'status', status,
                   'updated', updated_at) ORDER BY id) FROM connections) AS connections,
                (SELECT json_agg(l ORDER BY id) FROM leads l) AS leads`,
      );
    const before = await rows();

    await deploy(db.url, CLIENTS);

    expect(await rows()).toEqual(before);
    const clients = await q<{ id: string; tenant_id: string; name: string; timezone: string }>(
      `SELECT id, tenant_id, name, timezone, defaults, branding FROM clients ORDER BY name`,
    );
    expect(clients).toEqual([
      expect.objectContaining({
        tenant_id: agency!.id,
        name: "Agency",
        timezone: "America/New_York",
        defaults: {},
        branding: {},
      }),
      expect.objectContaining({ tenant_id: solo!.id, name: "Solo Plumber", timezone: "UTC" }),
    ]);
    const clientOf = Object.fromEntries(clients.map((client) => [client.tenant_id, client.id]));
    const placed = await q<{ id: string; tenant_id: string; client_id: string }>(
      `SELECT id, tenant_id, client_id FROM connections`,
    );
    expect(placed).toHaveLength(4);
    for (const row of placed) expect(row.client_id).toBe(clientOf[row.tenant_id]);

    // The API of this release on the migrated database: the answers of before, with clientId beside.
    const api = await startApi(testConfig(db.url, { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY }));
    try {
      const operator = adminAs(api.url, OPERATOR_KEY);
      const listed = await operator.get(`/admin/connections?tenantId=${agency!.id}`);
      expect(listed.status).toBe(200);
      const byId = Object.fromEntries(listed.body.items.map((item: { id: string }) => [item.id, item]));
      expect(byId[own]).toMatchObject({
        clientId: clientOf[agency!.id],
        effectiveSettings: {
          businessHours: HOURS,
          responseTarget: { seconds: 120 },
          source: { autoResponse: "default", businessHours: "tenant", responseTarget: "connection" },
        },
      });
      expect(byId[inheriting].effectiveSettings).toMatchObject({
        responseTarget: { seconds: 600 },
        source: { autoResponse: "default", businessHours: "tenant", responseTarget: "tenant" },
      });
      expect(byId[disabled]).toMatchObject({ status: "disabled", clientId: clientOf[agency!.id] });
      const leads = await operator.get(`/admin/leads?tenantId=${agency!.id}`);
      expect(leads.body.items.map((lead: { name: string }) => lead.name).sort()).toEqual([
        "Person 1",
        "Person 2",
      ]);
      const tenants = await operator.get("/admin/tenants");
      expect(tenants.body.items.map((tenant: { name: string }) => tenant.name).sort()).toEqual([
        "Agency",
        "Solo Plumber",
      ]);
    } finally {
      await api.close();
    }

    // What a process of the previous release writes still works: a tenant gets its first client,
    // and a connection inserted without a client belongs to its tenant's first one.
    const [late] = await q<{ id: string }>(`INSERT INTO tenants (name) VALUES ('Late Agency') RETURNING id`);
    const [lateClient] = await q<{ id: string }>(`SELECT id FROM clients WHERE tenant_id = $1`, [late!.id]);
    expect(lateClient).toBeDefined();
    const [inserted] = await q<{ client_id: string }>(
      `INSERT INTO connections (tenant_id, provider, external_account_id, display_name, inbound_auth)
       VALUES ($1, 'staticforms', 'late-form', 'late', '{"type":"bearer"}') RETURNING client_id`,
      [late!.id],
    );
    expect(inserted!.client_id).toBe(lateClient!.id);
    // And the database refuses a connection in another tenant's client.
    await expect(
      q(
        `INSERT INTO connections (tenant_id, client_id, provider, external_account_id, display_name, inbound_auth)
         VALUES ($1, $2, 'staticforms', 'cross-form', 'x', '{"type":"bearer"}')`,
        [late!.id, clientOf[solo!.id]],
      ),
    ).rejects.toThrow(/connections_client_id_tenant_id_fkey/);
  });
});
