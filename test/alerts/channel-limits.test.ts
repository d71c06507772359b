// The channel cap and the channel audit: a tenant has at most MAX_CHANNELS_PER_TENANT
// notification channels (one more is 422 limit_reached, nothing written, decided by the database
// under concurrent creations), and a channel's creation or deletion commits with its audit row or
// not at all.
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { useApp } from "../support/harness.js";

describe("notification channels per tenant", () => {
  const app = useApp({
    env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY, MAX_CHANNELS_PER_TENANT: "3" },
  });
  const count = async (sql: string, params: unknown[]) =>
    (await app.sql.query<{ n: number }>(sql, params)).rows[0]!.n;
  const channels = (tenantId: string) =>
    count("SELECT count(*)::int AS n FROM notification_channels WHERE tenant_id = $1", [tenantId]);
  const audits = (tenantId: string) =>
    count(
      "SELECT count(*)::int AS n FROM audit_entries WHERE tenant_id = $1 AND action = 'notification-channel.create'",
      [tenantId],
    );
  const hook = (n: number | string) => ({ type: "webhook", url: `http://127.0.0.1:9/hook-${n}` });

  it("one more than MAX_CHANNELS_PER_TENANT is 422 limit_reached, nothing written; deleting one frees its place; platform channels are not a tenant's", async () => {
    const tenant = await createTenant(app.url);
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await tenant.admin.post("/admin/notification-channels", hook(i));
      expect(created.status).toBe(201);
      made.push(created.body.channel.id as string);
    }
    for (const [admin, tenantId] of [
      [tenant.admin, undefined],
      [app.operator, tenant.tenantId],
    ] as const) {
      const refused = await admin.post("/admin/notification-channels", { ...hook("over"), tenantId });
      expect([refused.status, refused.body]).toEqual([
        422,
        { error: "limit_reached", message: expect.any(String) },
      ]);
      expect(refused.text).not.toContain("whsec_");
    }
    expect([await channels(tenant.tenantId), await audits(tenant.tenantId)]).toEqual([3, 3]);

    expect((await tenant.admin.delete(`/admin/notification-channels/${made[0]!}`)).status).toBe(204);
    expect((await tenant.admin.post("/admin/notification-channels", hook("again"))).status).toBe(201);
    expect(await channels(tenant.tenantId)).toBe(3);
    // An operator's platform channel belongs to no tenant: the cap does not apply to it.
    for (let i = 0; i < 4; i++) {
      expect((await app.operator.post("/admin/notification-channels", hook(`platform-${i}`))).status).toBe(
        201,
      );
    }
  });

  it("concurrent creations cannot pass the cap: the database decides", async () => {
    const tenant = await createTenant(app.url);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        app.operator.post("/admin/notification-channels", {
          ...hook(`race-${i}`),
          tenantId: tenant.tenantId,
        }),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([
      ...Array(3).fill(201),
      ...Array(9).fill(422),
    ]);
    expect([await channels(tenant.tenantId), await audits(tenant.tenantId)]).toEqual([3, 3]);
  });
});

describe("notification channels: the audit row commits with the change", () => {
  const app = useApp({ env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY } });
  /** Makes Postgres refuse the audit row of `action` while `work` runs. */
  const refusingAudit = async (action: string, work: () => Promise<void>) => {
    await app.sql.query(
      `ALTER TABLE audit_entries ADD CONSTRAINT test_refuse_audit CHECK (action <> '${action}') NOT VALID`,
    );
    try {
      await work();
    } finally {
      await app.sql.query("ALTER TABLE audit_entries DROP CONSTRAINT test_refuse_audit");
    }
  };

  it("a creation whose audit row fails leaves no channel; a deletion whose audit row fails leaves the channel", async () => {
    const tenant = await createTenant(app.url);
    await refusingAudit("notification-channel.create", async () => {
      const answer = await tenant.admin.post("/admin/notification-channels", {
        type: "webhook",
        url: "http://127.0.0.1:9/audited",
      });
      expect(answer.status).toBe(500);
    });
    const rows = await app.sql.query("SELECT id FROM notification_channels WHERE tenant_id = $1", [
      tenant.tenantId,
    ]);
    expect(rows.rows).toEqual([]);

    const created = await tenant.admin.post("/admin/notification-channels", {
      type: "webhook",
      url: "http://127.0.0.1:9/audited",
    });
    expect(created.status).toBe(201);
    const id = created.body.channel.id as string;
    await refusingAudit("notification-channel.delete", async () => {
      expect((await tenant.admin.delete(`/admin/notification-channels/${id}`)).status).toBe(500);
    });
    const kept = await app.sql.query("SELECT id FROM notification_channels WHERE id = $1", [id]);
    expect(kept.rows).toEqual([{ id }]);
    expect((await tenant.admin.delete(`/admin/notification-channels/${id}`)).status).toBe(204);
    const audit = await app.sql.query<{ action: string }>(
      "SELECT action FROM audit_entries WHERE target_id = $1 ORDER BY created_at",
      [id],
    );
    expect(audit.rows.map((row) => row.action)).toEqual([
      "notification-channel.create",
      "notification-channel.delete",
    ]);
  });
});
