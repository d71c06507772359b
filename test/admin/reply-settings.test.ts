// Reply settings through the admin API (api.md "First replies"): tenant defaults inherited and
// overridden (with their `source`), null back to inheriting, every validation error (nothing
// written), the tenant PATCH's roles, and the reply preview (stored and sample lead, after hours).
import { randomBytes } from "node:crypto";
import { adminAs, createTenant, OPERATOR_KEY } from "../support/admin.js";
import { useApp } from "../support/harness.js";

const TEXT = "Hi {{lead.firstName|there}}, {{business.name}} here about {{lead.service|your project}}.";
const HOURS = {
  timezone: "America/New_York",
  weekly: { mon: [["08:00", "18:00"]], tue: [["08:00", "18:00"]] },
};
const CLOSED = {
  timezone: "Asia/Kolkata",
  weekly: { mon: [], tue: [], wed: [], thu: [], fri: [], sat: [], sun: [] },
};

describe("admin API: reply settings and tenant defaults", () => {
  const app = useApp({ env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY } });
  let tenant: Awaited<ReturnType<typeof createTenant>>;

  beforeAll(async () => {
    tenant = await createTenant(app.url);
  });

  const thumbtackBody = (settings?: object) => ({
    provider: "thumbtack",
    externalAccountId: `7${randomBytes(8).readBigUInt64BE().toString().padStart(17, "0").slice(0, 17)}`,
    displayName: "Acme Roofing",
    inboundAuth: { type: "basic" },
    ...(settings ? { settings } : {}),
  });
  const thumbtack = async (admin = tenant.admin, settings?: object) => {
    const answer = await admin.post("/admin/connections", thumbtackBody(settings));
    expect(answer.status).toBe(201);
    return answer.body.connection.id as string;
  };
  /** Everything an admin action may write: a refused one leaves all of it as it was. */
  const snapshot = async () =>
    (
      await app.sql.query<Record<string, unknown>>(
        `SELECT (SELECT json_agg(json_build_object('id', id, 'settings', settings) ORDER BY id) FROM connections) AS connections,
                (SELECT json_agg(json_build_object('id', id, 'name', name, 'defaults', defaults) ORDER BY id) FROM tenants) AS tenants,
                (SELECT count(*)::int FROM audit_entries) AS audit,
                (SELECT count(*)::int FROM jobs) AS jobs,
                (SELECT json_agg(json_build_object('id', id, 'updated', updated_at) ORDER BY id) FROM leads) AS leads`,
      )
    ).rows[0]!;

  it("a connection inherits each default whole, overrides it with its own, and null returns it to inheriting", async () => {
    const own = await createTenant(app.url);
    const id = await thumbtack(own.admin, { responseTarget: { seconds: 120 } });
    const before = await own.admin.get(`/admin/connections/${id}`);
    expect(before.body.effectiveSettings).toEqual({
      autoResponse: null,
      businessHours: null,
      responseTarget: { seconds: 120 },
      source: { autoResponse: "default", businessHours: "default", responseTarget: "connection" },
    });

    const defaults = { autoResponse: { enabled: true, text: TEXT, delaySeconds: 60 }, businessHours: HOURS };
    const patched = await own.admin.patch(`/admin/tenants/${own.tenantId}`, { defaults });
    expect([patched.status, patched.body.tenant]).toEqual([
      200,
      { id: own.tenantId, name: expect.any(String), defaults, createdAt: expect.any(String) },
    ]);
    const inherited = await own.admin.get(`/admin/connections?limit=10`);
    expect(inherited.body.items.map((c: { effectiveSettings: object }) => c.effectiveSettings)).toEqual([
      {
        ...defaults,
        responseTarget: { seconds: 120 },
        source: { autoResponse: "tenant", businessHours: "tenant", responseTarget: "connection" },
      },
    ]);

    const mine = { enabled: false, text: "We are on it." };
    const overridden = await own.admin.patch(`/admin/connections/${id}`, {
      settings: { autoResponse: mine },
    });
    expect([overridden.status, overridden.body.connection.effectiveSettings]).toMatchObject([
      200,
      {
        autoResponse: mine,
        businessHours: HOURS,
        source: { autoResponse: "connection", businessHours: "tenant" },
      },
    ]);
    // A PATCH changes only the fields it names; null removes the connection's own (inherits again).
    const back = await own.admin.patch(`/admin/connections/${id}`, {
      settings: { autoResponse: null, responseTarget: null },
    });
    expect([back.status, back.body.connection.settings, back.body.connection.effectiveSettings]).toEqual([
      200,
      {},
      {
        ...defaults,
        responseTarget: { seconds: 300 },
        source: { autoResponse: "tenant", businessHours: "tenant", responseTarget: "default" },
      },
    ]);

    // The tenant's null removes its default: connections fall back to the built-in one.
    const removed = await own.admin.patch(`/admin/tenants/${own.tenantId}`, {
      defaults: { businessHours: null },
    });
    expect(removed.body.tenant.defaults).toEqual({ autoResponse: defaults.autoResponse });
    const view = await own.admin.get(`/admin/connections/${id}`);
    expect(view.body.effectiveSettings.source.businessHours).toBe("default");
    expect((await own.admin.get(`/admin/tenants/${own.tenantId}`)).body.defaults).toEqual({
      autoResponse: defaults.autoResponse,
    });

    const audit = await app.sql.query<{ fields: string[] }>(
      "SELECT details->'fields' AS fields FROM audit_entries WHERE target_id = $1 AND action = 'tenant.update' ORDER BY created_at",
      [own.tenantId],
    );
    expect(audit.rows.map((row) => row.fields)).toEqual([
      ["defaults", "defaults.autoResponse", "defaults.businessHours"],
      ["defaults", "defaults.businessHours"],
    ]);
  });

  it("tenant views carry defaults; a tenant-admin may PATCH its own tenant and gets 404 for another", async () => {
    const created = await app.operator.post("/admin/tenants", { name: "Fresh agency" });
    expect(created.body.tenant.defaults).toEqual({});
    const listed = await app.operator.get("/admin/tenants?limit=1");
    expect(listed.body.items[0]).toEqual({ ...created.body.tenant });

    const renamed = await tenant.admin.patch(`/admin/tenants/${tenant.tenantId}`, { name: "Renamed agency" });
    expect([renamed.status, renamed.body.tenant.name]).toEqual([200, "Renamed agency"]);
    const before = await snapshot();
    const other = await tenant.admin.patch(`/admin/tenants/${created.body.tenant.id}`, { name: "Mine now" });
    expect([other.status, other.body.error]).toEqual([404, "not_found"]);
    const byOperator = await app.operator.patch(`/admin/tenants/${created.body.tenant.id}`, {
      defaults: { responseTarget: { seconds: 600 } },
    });
    expect(byOperator.body.tenant.defaults).toEqual({ responseTarget: { seconds: 600 } });
    expect((await snapshot()).audit).toBe((before.audit as number) + 1);
  });

  it("every invalid setting is 400 validation_failed naming the field (and the position), and writes nothing", async () => {
    const id = await thumbtack();
    const bad: [object, string, RegExp?][] = [
      [{ autoResponse: { enabled: true, text: "Hi {{lead.phone}}" } }, "autoResponse.text", /position 3/],
      [{ autoResponse: { enabled: true, text: "Hi {{lead.name" } }, "autoResponse.text", /position 3/],
      [
        { autoResponse: { enabled: true, text: "ok", afterHoursText: "Back at 8}}" } },
        "autoResponse.afterHoursText",
        /position/,
      ],
      [
        { autoResponse: { enabled: true, text: "{{lead.name}} ".repeat(13) } },
        "autoResponse.text",
        /position/,
      ],
      [{ autoResponse: { enabled: true, text: "x".repeat(1001) } }, "autoResponse.text"],
      [{ autoResponse: { enabled: true, text: "ok", delaySeconds: 901 } }, "autoResponse.delaySeconds"],
      [{ autoResponse: { enabled: true, text: "ok", delaySeconds: 1.5 } }, "autoResponse.delaySeconds"],
      [
        { autoResponse: { enabled: true, text: "ok", delaySeconds: 300 } },
        "autoResponse.delaySeconds",
        /less than/,
      ],
      [
        { autoResponse: { enabled: true, text: "ok", delaySeconds: 60 }, responseTarget: { seconds: 60 } },
        "autoResponse.delaySeconds",
        /less than/,
      ],
      [{ businessHours: { timezone: "Mars/Olympus", weekly: {} } }, "businessHours.timezone"],
      [
        { businessHours: { timezone: "Europe/Berlin", weekly: { mon: [["18:00", "08:00"]] } } },
        "businessHours.weekly.mon[0]",
      ],
      [
        {
          businessHours: {
            timezone: "Europe/Berlin",
            weekly: {
              tue: [
                ["08:00", "12:00"],
                ["11:00", "14:00"],
              ],
            },
          },
        },
        "businessHours.weekly.tue[1]",
      ],
      [
        {
          businessHours: {
            timezone: "Europe/Berlin",
            weekly: { wed: Array.from({ length: 7 }, (_, h) => [`0${h}:00`, `0${h}:30`]) },
          },
        },
        "businessHours.weekly.wed",
        /at most 6 ranges a day/,
      ],
      [{ responseTarget: { seconds: 0 } }, "responseTarget.seconds"],
      [{ responseTarget: { seconds: 86_401 } }, "responseTarget.seconds"],
      [{ responseTarget: { seconds: 30 } }, "responseTarget.seconds"], // below the tenant's inherited 60 s delay
    ];
    await tenant.admin.patch(`/admin/tenants/${tenant.tenantId}`, {
      defaults: { autoResponse: { enabled: true, text: "Thanks!", delaySeconds: 60 } },
    });
    const before = await snapshot();
    for (const [settings, field, message] of bad) {
      for (const [where, answer] of [
        ["create", await tenant.admin.post("/admin/connections", thumbtackBody(settings))],
        ["patch", await tenant.admin.patch(`/admin/connections/${id}`, { settings })],
        ["tenant", await tenant.admin.patch(`/admin/tenants/${tenant.tenantId}`, { defaults: settings })],
      ] as const) {
        const prefix = where === "tenant" ? "defaults" : "settings";
        // The tenant's own 60 s delay is the one being replaced there: the last case is valid for it.
        if (where === "tenant" && field === "responseTarget.seconds" && settings === bad.at(-1)![0]) continue;
        expect([
          where,
          field,
          answer.status,
          answer.body.error,
          Object.keys(answer.body.details ?? {}),
        ]).toEqual([where, field, 400, "validation_failed", [`${prefix}.${field}`]]);
        if (message) expect(answer.body.details[`${prefix}.${field}`].join(" ")).toMatch(message);
      }
    }
    expect(await snapshot()).toEqual(before);
  });

  it("hours are stored with touching ranges merged: 1,440 one-minute ranges a day are one; 720 apart are refused", async () => {
    const id = await thumbtack();
    const hh = (m: number) =>
      `${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`;
    const minutes = Array.from({ length: 1440 }, (_, m) => [hh(m), m === 1439 ? "24:00" : hh(m + 1)]);
    const weekly = Object.fromEntries(
      ["mon", "tue", "wed", "thu", "fri", "sat", "sun"].map((d) => [d, minutes]),
    );
    const merged = await tenant.admin.patch(`/admin/connections/${id}`, {
      settings: { businessHours: { timezone: "America/Chicago", weekly } },
    });
    expect([merged.status, merged.body.connection.settings.businessHours]).toEqual([
      200,
      {
        timezone: "America/Chicago",
        weekly: Object.fromEntries(Object.keys(weekly).map((d) => [d, [["00:00", "24:00"]]])),
      },
    ]);
    const stored = await app.sql.query<{ bytes: number }>(
      "SELECT octet_length(settings::text) AS bytes FROM connections WHERE id = $1",
      [id],
    );
    expect(stored.rows[0]!.bytes).toBeLessThan(1000);

    const before = await snapshot();
    const apart = Array.from({ length: 720 }, (_, i) => [hh(2 * i), hh(2 * i + 1)]);
    const refused = await tenant.admin.patch(`/admin/tenants/${tenant.tenantId}`, {
      defaults: { businessHours: { timezone: "America/Chicago", weekly: { sat: apart } } },
    });
    expect([refused.status, refused.body.details]).toEqual([
      400,
      { "defaults.businessHours.weekly.sat": [expect.stringContaining("at most 6 ranges a day")] },
    ]);
    expect(await snapshot()).toEqual(before);
  });

  it("Static Forms cannot enable an auto-response (no reply channel); disabled is accepted", async () => {
    const body = (enabled: boolean) => ({
      provider: "staticforms",
      externalAccountId: `form-${randomBytes(4).toString("hex")}`,
      displayName: "Contact form",
      inboundAuth: { type: "bearer" },
      settings: { autoResponse: { enabled, text: "Thanks!" } },
    });
    const before = await snapshot();
    const refused = await tenant.admin.post("/admin/connections", body(true));
    expect([refused.status, Object.keys(refused.body.details)]).toEqual([
      400,
      ["settings.autoResponse.enabled"],
    ]);
    expect(await snapshot()).toEqual(before);
    const accepted = await tenant.admin.post("/admin/connections", body(false));
    expect(accepted.status).toBe(201);
    const patched = await tenant.admin.patch(`/admin/connections/${accepted.body.connection.id}`, {
      settings: { autoResponse: { enabled: true, text: "Thanks!" } },
    });
    expect([patched.status, Object.keys(patched.body.details)]).toEqual([
      400,
      ["settings.autoResponse.enabled"],
    ]);
  });

  it("tenant defaults that would put a connection's delay at or above its target are refused, naming it", async () => {
    const own = await createTenant(app.url);
    const strict = await thumbtack(own.admin, { responseTarget: { seconds: 90 } });
    const before = await snapshot();
    const answer = await own.admin.patch(`/admin/tenants/${own.tenantId}`, {
      defaults: { autoResponse: { enabled: true, text: "Thanks!", delaySeconds: 120 } },
    });
    expect([answer.status, answer.body.error, Object.keys(answer.body.details)]).toEqual([
      400,
      "validation_failed",
      ["defaults.autoResponse.delaySeconds"],
    ]);
    expect(answer.body.details["defaults.autoResponse.delaySeconds"].join(" ")).toContain(strict);
    expect(await snapshot()).toEqual(before);
    // The same delay with a connection that sets its own auto-response is fine.
    await own.admin.patch(`/admin/connections/${strict}`, {
      settings: { autoResponse: { enabled: true, text: "Mine" } },
    });
    const ok = await own.admin.patch(`/admin/tenants/${own.tenantId}`, {
      defaults: { autoResponse: { enabled: true, text: "Thanks!", delaySeconds: 120 } },
    });
    expect(ok.status).toBe(200);
  });

  describe("POST /admin/connections/{id}/reply-preview", () => {
    let id: string;
    let leadId: string;
    const saved = {
      enabled: true,
      text: TEXT,
      afterHoursText: "{{lead.firstName|Hi}}, we open at 8.",
      delaySeconds: 120,
    };

    beforeAll(async () => {
      id = await thumbtack(tenant.admin, { autoResponse: saved, businessHours: HOURS });
      const { rows } = await app.sql.query<{ id: string }>(
        `INSERT INTO leads (tenant_id, connection_id, provider, external_lead_id, name, first_name, service, last_event_at)
         VALUES ($1, $2, 'thumbtack', 'neg-preview', 'Jo Pike', 'Jo', 'Gutter cleaning', now()) RETURNING id`,
        [tenant.tenantId, id],
      );
      leadId = rows[0]!.id;
    });
    const preview = (body: object, admin = tenant.admin, connectionId = id) =>
      admin.post(`/admin/connections/${connectionId}/reply-preview`, body);

    it("renders the saved template for a stored lead inside business hours, sent after the delay", async () => {
      // Monday 2026-03-09 10:00 in New York (EDT since the day before): inside 08:00–18:00.
      const answer = await preview({ leadId, at: "2026-03-09T14:00:00Z" });
      expect([answer.status, answer.body]).toEqual([
        200,
        {
          text: "Hi Jo, Acme Roofing here about Gutter cleaning.",
          variant: "business-hours",
          sendAt: "2026-03-09T14:02:00.000Z",
        },
      ]);
    });

    it("a sample lead by default; outside hours the after-hours text", async () => {
      // Wednesday: no ranges that day.
      const answer = await preview({ at: "2026-03-11T14:00:00Z" });
      expect(answer.body).toEqual({
        text: "Marta, we open at 8.",
        variant: "after-hours",
        sendAt: "2026-03-11T14:02:00.000Z",
      });
    });

    it("an unsaved auto-response, with the connection's hours (closed every day ⇒ after hours); writes nothing", async () => {
      const closedId = await thumbtack(tenant.admin, { businessHours: CLOSED });
      const before = await snapshot();
      const answer = await preview(
        { autoResponse: { enabled: true, text: "Thanks {{lead.name}} ({{provider}})!" } },
        tenant.admin,
        closedId,
      );
      expect([answer.status, answer.body.text, answer.body.variant]).toEqual([
        200,
        "Thanks Marta K. (Thumbtack)!",
        "after-hours",
      ]);
      expect(Date.parse(answer.body.sendAt)).toBeLessThanOrEqual(Date.now());
      expect(await snapshot()).toEqual(before);
    });

    it("refusals: a bad template (400, position), no auto-response (409), another connection's lead or tenant (404)", async () => {
      const bad = await preview({ autoResponse: { enabled: true, text: "Hi {{lead.email}}" } });
      expect([bad.status, Object.keys(bad.body.details)]).toEqual([400, ["autoResponse.text"]]);
      expect(bad.body.details["autoResponse.text"].join(" ")).toMatch(/position 3/);
      const slow = await preview({ autoResponse: { enabled: true, text: "Hi", delaySeconds: 300 } });
      expect([slow.status, Object.keys(slow.body.details)]).toEqual([400, ["autoResponse.delaySeconds"]]);

      const other = await createTenant(app.url);
      const bare = await thumbtack(other.admin);
      const none = await preview({}, other.admin, bare);
      expect([none.status, none.body.error]).toEqual([409, "no_auto_response"]);
      const foreignLead = await preview(
        { leadId, autoResponse: { enabled: true, text: "Hi" } },
        other.admin,
        bare,
      );
      expect([foreignLead.status, foreignLead.body.error]).toEqual([404, "not_found"]);
      const foreignConnection = await preview({}, other.admin, id);
      expect(foreignConnection.status).toBe(404);
      const unknownLead = await preview({ leadId: "00000000-0000-4000-8000-000000000000" });
      expect(unknownLead.status).toBe(404);
      const badAt = await preview({ at: "soon" });
      expect([badAt.status, Object.keys(badAt.body.details)]).toEqual([400, ["at"]]);
    });
  });

  it("an operator key previews too, and the tenant's default applies to its connection", async () => {
    const own = await createTenant(app.url);
    const id = await thumbtack(own.admin);
    await own.admin.patch(`/admin/tenants/${own.tenantId}`, {
      defaults: { autoResponse: { enabled: true, text: "Hello from {{business.name}}" } },
    });
    const answer = await adminAs(app.url, OPERATOR_KEY).post(`/admin/connections/${id}/reply-preview`, {
      at: "2026-01-01T00:00:00Z",
    });
    expect(answer.body).toEqual({
      text: "Hello from Acme Roofing",
      variant: "business-hours",
      sendAt: "2026-01-01T00:00:00.000Z",
    });
  });
});
