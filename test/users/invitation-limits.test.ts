// Invitation limits (api.md "Console and users"): at most 3 invitations an hour per user and 20 a
// day per tenant (429 rate_limited with Retry-After, nothing written, no mail), and at most
// MAX_USERS_PER_TENANT users per tenant, pending ones included (422 limit_reached). Mails go to a
// real SMTP server on loopback.
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { uniqueEmail } from "../support/console.js";
import { useApp } from "../support/harness.js";
import { useSmtpServer } from "../support/smtp.js";

describe("invitations per user and per tenant", () => {
  const smtp = useSmtpServer();
  const app = useApp({
    env: () => ({
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      SMTP_URL: smtp.url,
      ALERT_EMAIL_FROM: "leadgate@agency.example",
    }),
  });
  const rows = async (sql: string, values: unknown[]) =>
    (await app.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, values)).rows[0]!.n;
  const refusedFor = (answer: { status: number; body: { error?: string }; headers: Headers }) => [
    answer.status,
    answer.body.error,
    Number(answer.headers.get("retry-after")),
  ];

  it("a user is sent at most 3 invitations an hour: the next re-invitations are 429 with Retry-After, no mail and nothing written", async () => {
    const tenant = await createTenant(app.url);
    const email = uniqueEmail("thrice");
    const created = await tenant.admin.post("/admin/users", { email, role: "tenant-viewer" });
    expect(created.status).toBe(201);
    const id = created.body.user.id as string;
    for (let i = 0; i < 2; i++)
      expect((await tenant.admin.post(`/admin/users/${id}/invitation`)).status).toBe(201);
    expect(smtp.to(email)).toHaveLength(3);
    const written = async () => [
      await rows("user_invitations WHERE user_id = $1", [id]),
      await rows("audit_entries WHERE target_id = $1", [id]),
    ];
    const before = await written();

    for (const admin of [tenant.admin, app.operator, tenant.admin]) {
      const refused = await admin.post(`/admin/users/${id}/invitation`);
      expect(refusedFor(refused)).toEqual([429, "rate_limited", expect.any(Number)]);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(3500);
      expect(Number(refused.headers.get("retry-after"))).toBeLessThanOrEqual(3600);
    }
    expect(smtp.to(email)).toHaveLength(3);
    expect(await written()).toEqual(before);
    // The last invitation issued is still the one live.
    expect(await rows("user_invitations WHERE user_id = $1 AND voided_at IS NULL", [id])).toBe(1);

    // Another user of the tenant is not affected.
    const other = await tenant.admin.post("/admin/users", {
      email: uniqueEmail("other"),
      role: "tenant-viewer",
    });
    expect((await tenant.admin.post(`/admin/users/${other.body.user.id as string}/invitation`)).status).toBe(
      201,
    );
  });

  it("an accepted user's re-invitation is 409 already_accepted, whatever its count", async () => {
    const email = uniqueEmail("done");
    const created = await app.operator.post("/admin/users", { email, role: "operator" });
    const token = new URL(created.body.invitation.url as string).searchParams.get("token");
    const accepted = await fetch(`${app.url}/console/api/invitations/accept`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token, password: "correct horse battery staple" }),
    });
    expect(accepted.status).toBe(204);
    for (let i = 0; i < 4; i++) {
      const again = await app.operator.post(`/admin/users/${created.body.user.id as string}/invitation`);
      expect([again.status, again.body.error]).toEqual([409, "already_accepted"]);
    }
  });

  it("a tenant's users are sent at most 20 invitations a day, new users and re-invitations alike; refused attempts give theirs back; other tenants are not affected", async () => {
    const tenant = await createTenant(app.url);
    const other = await createTenant(app.url);
    const emails: string[] = [];
    const invite = (email: string, admin = tenant.admin) =>
      admin.post("/admin/users", { email, role: "tenant-viewer" });
    const first = await invite(uniqueEmail("day"));
    expect(first.status).toBe(201);
    const firstId = first.body.user.id as string;
    expect((await tenant.admin.post(`/admin/users/${firstId}/invitation`)).status).toBe(201);
    // A refused creation (the e-mail is taken) counts nothing.
    const taken = await invite(first.body.user.email as string);
    expect([taken.status, taken.body.error]).toEqual([409, "user_exists"]);
    for (let i = 0; i < 18; i++) {
      const email = uniqueEmail(`day${i}`);
      emails.push(email);
      expect((await invite(email)).status).toBe(201);
    }
    const users = await rows("users WHERE tenant_id = $1", [tenant.tenantId]);
    expect(users).toBe(19);

    const late = uniqueEmail("late");
    for (const [admin, body] of [
      [tenant.admin, { email: late, role: "tenant-viewer" }],
      [app.operator, { email: late, role: "tenant-admin", tenantId: tenant.tenantId }],
    ] as const) {
      const refused = await admin.post("/admin/users", body);
      expect(refusedFor(refused)).toEqual([429, "rate_limited", expect.any(Number)]);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(86_000);
    }
    const reinvite = await tenant.admin.post(`/admin/users/${firstId}/invitation`);
    expect([reinvite.status, reinvite.body.error]).toEqual([429, "rate_limited"]);
    expect(await rows("users WHERE tenant_id = $1", [tenant.tenantId])).toBe(19);
    expect(await rows("users WHERE email = $1", [late])).toBe(0);
    expect(smtp.to(late)).toHaveLength(0);
    expect(smtp.to(first.body.user.email as string)).toHaveLength(2);

    expect((await invite(uniqueEmail("elsewhere"), other.admin)).status).toBe(201);
    // Operators belong to no tenant: no tenant's budget is theirs.
    expect(
      (await app.operator.post("/admin/users", { email: uniqueEmail("op"), role: "operator" })).status,
    ).toBe(201);
  });
});

describe("users per tenant", () => {
  const app = useApp({ env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY, MAX_USERS_PER_TENANT: "3" } });
  const live = async (tenantId: string) =>
    (
      await app.sql.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM users WHERE tenant_id = $1 AND disabled_at IS NULL",
        [tenantId],
      )
    ).rows[0]!.n;

  it("one more than MAX_USERS_PER_TENANT (pending users count) is 422 limit_reached, nothing written; a disabled user frees its place", async () => {
    const tenant = await createTenant(app.url);
    const made: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await tenant.admin.post("/admin/users", {
        email: uniqueEmail("cap"),
        role: "tenant-viewer",
      });
      expect([created.status, created.body.user.accepted]).toEqual([201, false]);
      made.push(created.body.user.id as string);
    }
    const audit = async () =>
      (
        await app.sql.query("SELECT count(*)::int AS n FROM audit_entries WHERE tenant_id = $1", [
          tenant.tenantId,
        ])
      ).rows[0].n as number;
    const before = await audit();
    const email = uniqueEmail("over");
    for (const [admin, body] of [
      [tenant.admin, { email, role: "tenant-admin" }],
      [app.operator, { email, role: "tenant-viewer", tenantId: tenant.tenantId }],
    ] as const) {
      const refused = await admin.post("/admin/users", body);
      expect([refused.status, refused.body.error]).toEqual([422, "limit_reached"]);
      expect(refused.body.message).toContain("MAX_USERS_PER_TENANT");
    }
    expect([await live(tenant.tenantId), await audit()]).toEqual([3, before]);
    expect((await app.sql.query("SELECT 1 FROM users WHERE email = $1", [email])).rowCount).toBe(0);

    expect((await tenant.admin.delete(`/admin/users/${made[0]!}`)).status).toBe(204);
    expect((await tenant.admin.post("/admin/users", { email, role: "tenant-viewer" })).status).toBe(201);
    expect(await live(tenant.tenantId)).toBe(3);
    // Operators belong to no tenant and have no cap.
    expect(
      (await app.operator.post("/admin/users", { email: uniqueEmail("op"), role: "operator" })).status,
    ).toBe(201);
  });

  it("concurrent creations cannot pass the cap: the database decides", async () => {
    const tenant = await createTenant(app.url);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        tenant.admin.post("/admin/users", { email: uniqueEmail("para"), role: "tenant-viewer" }),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([
      ...Array(3).fill(201),
      ...Array(7).fill(422),
    ]);
    expect(await live(tenant.tenantId)).toBe(3);
  });
});
