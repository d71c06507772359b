// Console users (api.md "Console and users"): invitations, accepting them and signing in, through
// HTTP as the console does (the throttling of failed sign-ins: sign-in-throttling.test.ts).
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { acceptInvitation, PASSWORD, signedInUser, signIn, uniqueEmail } from "../support/console.js";
import { useApp } from "../support/harness.js";

const PUBLIC_BASE_URL = "http://console.leadgate.test:3000";

describe("console users: invitations and sign-in", () => {
  const app = useApp({
    env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY, TRUST_PROXY: "127.0.0.1", PUBLIC_BASE_URL },
  });
  const count = async (table: string) =>
    (await app.sql.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]!.n;
  const invite = (body: object, admin = app.operator) => admin.post("/admin/users", body);

  it("invite, accept, sign in, then the admin API with the session cookie; the audit names the user", async () => {
    const email = uniqueEmail("ana");
    const created = await invite({ email: email.toUpperCase(), role: "operator" });
    expect(created.status).toBe(201);
    expect(created.body.user).toMatchObject({ email, role: "operator", tenantId: null, accepted: false });
    const url = new URL(created.body.invitation.url as string);
    expect(`${url.origin}${url.pathname}`).toBe(`${PUBLIC_BASE_URL}/console/accept-invitation`);
    expect(new Date(created.body.invitation.expiresAt as string).getTime() - Date.now()).toBeGreaterThan(
      71.9 * 3600_000,
    );
    const token = url.searchParams.get("token")!;
    const stored = await app.sql.query("SELECT token_hash FROM user_invitations WHERE user_id = $1", [
      created.body.user.id,
    ]);
    expect(JSON.stringify(stored.rows)).not.toContain(token);

    expect((await acceptInvitation(app.url, url.toString(), PASSWORD)).status).toBe(204);
    const { rows } = await app.sql.query("SELECT password_hash FROM users WHERE id = $1", [
      created.body.user.id,
    ]);
    expect(rows[0].password_hash).toMatch(/^\$argon2id\$/);

    const session = await signIn(app.url, email, PASSWORD);
    expect(session.status).toBe(200);
    expect(session.body.user).toMatchObject({ id: created.body.user.id, email, role: "operator" });
    expect(session.setCookie).toMatch(
      /^leadgate_session=[^;]+; Path=\/; Max-Age=604800; HttpOnly; SameSite=Lax$/,
    );
    const cookie = session.cookie!;
    expect(JSON.stringify((await app.sql.query("SELECT * FROM sessions")).rows)).not.toContain(
      cookie.split("=")[1],
    );

    const who = await fetch(`${app.url}/console/api/session`, { headers: { cookie } });
    expect(who.status).toBe(200);
    expect(await who.json()).toMatchObject({ user: { email }, csrfToken: session.body.csrfToken });
    const tenants = await fetch(`${app.url}/admin/tenants`, { headers: { cookie } });
    expect(tenants.status).toBe(200);

    const made = await fetch(`${app.url}/admin/tenants`, {
      method: "POST",
      headers: { cookie, "x-csrf-token": session.body.csrfToken, "content-type": "application/json" },
      body: JSON.stringify({ name: "made by a user" }),
    });
    expect(made.status).toBe(201);
    const tenantId = ((await made.json()) as { tenant: { id: string } }).tenant.id;
    const audit = await app.operator.get(`/admin/audit`);
    expect(audit.body.items.find((entry: { targetId: string }) => entry.targetId === tenantId)).toMatchObject(
      {
        action: "tenant.create",
        userId: created.body.user.id,
        apiKeyId: null,
      },
    );
    expect(await fetch(`${app.url}/console/api/session`).then((r) => r.status)).toBe(401);
  });

  it("login CSRF: a form post (415), another site (403) or another origin (403) signs no one in; the own origin does", async () => {
    const email = uniqueEmail("csrf");
    const created = await invite({ email, role: "operator" });
    const invitation = new URL(created.body.invitation.url as string);
    const token = invitation.searchParams.get("token")!;
    const sessions = await count("sessions");
    const post = (path: string, headers: Record<string, string>, body: string) =>
      fetch(`${app.url}/console/api/${path}`, { method: "POST", headers, body });
    const json = { "content-type": "application/json" };

    // A hostile page's auto-submitting form: urlencoded, and its browser names the other site.
    const form = await post(
      "session",
      { "content-type": "application/x-www-form-urlencoded" },
      `email=${email}&password=${PASSWORD}`,
    );
    expect([form.status, ((await form.json()) as { error: string }).error]).toEqual([
      415,
      "unsupported_media_type",
    ]);
    const acceptByForm = await post(
      "invitations/accept",
      { "content-type": "application/x-www-form-urlencoded" },
      `token=${token}&password=${PASSWORD}`,
    );
    expect(acceptByForm.status).toBe(415);
    for (const headers of [
      { ...json, "sec-fetch-site": "cross-site" },
      { ...json, origin: "https://evil.example" },
    ]) {
      const accept = await post("invitations/accept", headers, JSON.stringify({ token, password: PASSWORD }));
      expect([accept.status, ((await accept.json()) as { error: string }).error]).toEqual([
        403,
        "cross_site_request",
      ]);
    }
    expect(
      (await app.sql.query("SELECT password_hash FROM users WHERE email = $1", [email])).rows[0]
        .password_hash,
    ).toBeNull();

    const accepted = await post(
      "invitations/accept",
      { ...json, origin: PUBLIC_BASE_URL, "sec-fetch-site": "same-origin" },
      JSON.stringify({ token, password: PASSWORD }),
    );
    expect(accepted.status).toBe(204);
    for (const headers of [
      { ...json, "sec-fetch-site": "cross-site" },
      { ...json, "sec-fetch-site": "same-site" },
      { ...json, origin: "null" },
    ]) {
      const refused = await post("session", headers, JSON.stringify({ email, password: PASSWORD }));
      expect([refused.status, ((await refused.json()) as { error: string }).error]).toEqual([
        403,
        "cross_site_request",
      ]);
    }
    expect(await count("sessions")).toBe(sessions);
    const own = await post(
      "session",
      { ...json, origin: PUBLIC_BASE_URL },
      JSON.stringify({ email, password: PASSWORD }),
    );
    expect(own.status).toBe(200);
    // The admin API takes JSON only too.
    const adminForm = await fetch(`${app.url}/admin/tenants`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${OPERATOR_KEY}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: "name=by-form",
    });
    expect(adminForm.status).toBe(415);
    expect((await app.sql.query("SELECT 1 FROM tenants WHERE name = 'by-form'")).rows).toEqual([]);
  });

  it("a wrong e-mail and a wrong password get the same answer in about the same time", async () => {
    const user = await signedInUser(app.url, { role: "operator" });
    const attempts = { unknown: [] as number[], wrong: [] as number[] };
    const answers = new Set<string>();
    for (let i = 0; i < 9; i++) {
      const ip = `192.0.2.${10 + i}`;
      const unknown = await signIn(app.url, uniqueEmail("nobody"), PASSWORD, ip);
      const wrong = await signIn(app.url, user.email, `${PASSWORD}-not`, ip);
      attempts.unknown.push(unknown.ms);
      attempts.wrong.push(wrong.ms);
      answers.add(`${unknown.status} ${unknown.text}`).add(`${wrong.status} ${wrong.text}`);
    }
    expect([...answers]).toEqual([
      '401 {"error":"invalid_credentials","message":"The e-mail or the password is wrong."}',
    ]);
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
    const [a, b] = [median(attempts.unknown), median(attempts.wrong)];
    // Both verify an argon2id hash (tens of ms); without the dummy hash an unknown e-mail answers in
    // ~1 ms, a tenth of the other or less. The bound leaves room for a machine loaded by other tests.
    expect(Math.min(a, b)).toBeGreaterThan(5);
    expect(Math.min(a, b) / Math.max(a, b)).toBeGreaterThan(1 / 3);
  });

  it("an invitation works once, not after a newer one, not after 72 h; a weak password writes nothing", async () => {
    const email = uniqueEmail("bo");
    const first = await invite({ email, role: "operator" });
    const again = await app.operator.post(`/admin/users/${first.body.user.id}/invitation`);
    expect(again.status).toBe(201);
    const invalid = { status: 400, body: expect.objectContaining({ error: "invalid_invitation" }) };
    expect(await acceptInvitation(app.url, first.body.invitation.url, PASSWORD)).toEqual(invalid);

    const passwordOf = async () =>
      (
        await app.sql.query<{ password_hash: string | null }>(
          "SELECT password_hash FROM users WHERE id = $1",
          [first.body.user.id],
        )
      ).rows[0]!.password_hash;
    for (const weak of ["short pass", email, email.toUpperCase()]) {
      const answer = await acceptInvitation(app.url, again.body.invitation.url, weak);
      expect([answer.status, answer.body.error, Object.keys(answer.body.details)]).toEqual([
        400,
        "validation_failed",
        ["password"],
      ]);
    }
    expect(await passwordOf()).toBeNull();
    expect(await acceptInvitation(app.url, again.body.invitation.url, PASSWORD)).toEqual({
      status: 204,
      body: undefined,
    });
    expect(await acceptInvitation(app.url, again.body.invitation.url, `${PASSWORD}2`)).toEqual(invalid);
    const hash = await passwordOf();
    expect((await signIn(app.url, email, PASSWORD)).status).toBe(200);
    const accepted = await app.operator.post(`/admin/users/${first.body.user.id}/invitation`);
    expect([accepted.status, accepted.body.error]).toEqual([409, "already_accepted"]);

    const late = await invite({ email: uniqueEmail("late"), role: "operator" });
    await app.sql.query(
      "UPDATE user_invitations SET expires_at = now() - interval '1 second' WHERE user_id = $1",
      [late.body.user.id],
    );
    expect(await acceptInvitation(app.url, late.body.invitation.url, PASSWORD)).toEqual(invalid);
    expect(await passwordOf()).toBe(hash);
  });

  it("re-invitations and acceptances in parallel: never two live invitations, never a password reset by one", async () => {
    const live = async (userId: string) =>
      (
        await app.sql.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM user_invitations WHERE user_id = $1 AND used_at IS NULL AND voided_at IS NULL",
          [userId],
        )
      ).rows[0]!.n;
    // Five re-invitations at once: the user's hourly limit (3 with its first) lets two through, and
    // each voids the one before it, so exactly one stays live.
    const pending = await invite({ email: uniqueEmail("para"), role: "operator" });
    const id = pending.body.user.id as string;
    const again = await Promise.all(
      Array.from({ length: 5 }, () => app.operator.post(`/admin/users/${id}/invitation`)),
    );
    expect(again.map((answer) => answer.status).sort()).toEqual([201, 201, 429, 429, 429]);
    expect(await live(id)).toBe(1);

    // An acceptance racing re-invitations: once the password is set, no invitation stays live.
    const racing = await invite({ email: uniqueEmail("race"), role: "operator" });
    const raced = racing.body.user.id as string;
    const [accepted, ...reinvited] = await Promise.all([
      acceptInvitation(app.url, racing.body.invitation.url as string, PASSWORD),
      ...Array.from({ length: 4 }, () => app.operator.post(`/admin/users/${raced}/invitation`)),
    ]);
    const { rows } = await app.sql.query("SELECT password_hash FROM users WHERE id = $1", [raced]);
    if (accepted.status === 204) {
      // Every re-invitation came before the acceptance (voided) or after it (refused): none is live.
      expect(rows[0].password_hash).not.toBeNull();
      expect(await live(raced)).toBe(0);
      expect(reinvited.every((answer) => [201, 409, 429].includes(answer.status))).toBe(true);
      expect((await app.operator.post(`/admin/users/${raced}/invitation`)).status).toBe(409);
    } else {
      // A re-invitation voided the link first: no password, and exactly the newest link is live.
      expect(accepted.status).toBe(400);
      expect(rows[0].password_hash).toBeNull();
      expect(await live(raced)).toBe(1);
    }

    // An accepted user's invitation made live again behind the API's back cannot reset its password.
    const done = await invite({ email: uniqueEmail("done"), role: "operator" });
    const url = done.body.invitation.url as string;
    expect((await acceptInvitation(app.url, url, PASSWORD)).status).toBe(204);
    const passwordOf = async () =>
      (await app.sql.query("SELECT password_hash FROM users WHERE id = $1", [done.body.user.id])).rows[0]
        .password_hash as string;
    const before = await passwordOf();
    await app.sql.query("UPDATE user_invitations SET used_at = NULL WHERE user_id = $1", [done.body.user.id]);
    const reset = await acceptInvitation(app.url, url, "another long password 123");
    expect([reset.status, reset.body?.error]).toEqual([400, "invalid_invitation"]);
    expect(await passwordOf()).toBe(before);
  });

  it("an e-mail is unique in any case; tenant-admins invite only into their own tenant, never operators", async () => {
    const tenant = await createTenant(app.url);
    const other = await createTenant(app.url);
    const email = uniqueEmail("cy");
    expect((await invite({ email, role: "tenant-viewer", tenantId: tenant.tenantId })).status).toBe(201);
    const before = [await count("users"), await count("user_invitations"), await count("audit_entries")];
    const taken = await invite({
      email: email.toUpperCase(),
      role: "tenant-admin",
      tenantId: other.tenantId,
    });
    expect([taken.status, taken.body.error]).toEqual([409, "user_exists"]);
    const operator = await invite({ email: uniqueEmail(), role: "operator" }, tenant.admin);
    expect([operator.status, operator.body.error]).toEqual([403, "forbidden"]);
    const elsewhere = await invite(
      { email: uniqueEmail(), role: "tenant-admin", tenantId: other.tenantId },
      tenant.admin,
    );
    expect([elsewhere.status, elsewhere.body.error]).toEqual([404, "not_found"]);
    const noTenant = await invite({ email: uniqueEmail(), role: "tenant-admin" });
    expect([noTenant.status, Object.keys(noTenant.body.details)]).toEqual([400, ["tenantId"]]);
    const badEmail = await invite({ email: "not-an-email", role: "operator" });
    expect([badEmail.status, Object.keys(badEmail.body.details)]).toEqual([400, ["email"]]);
    expect([await count("users"), await count("user_invitations"), await count("audit_entries")]).toEqual(
      before,
    );

    const own = await invite({ email: uniqueEmail("own"), role: "tenant-admin" }, tenant.admin);
    expect([own.status, own.body.user.tenantId]).toEqual([201, tenant.tenantId]);
    const listed = await tenant.admin.get("/admin/users");
    expect(listed.body.items.map((user: { tenantId: string }) => user.tenantId)).toEqual([
      tenant.tenantId,
      tenant.tenantId,
    ]);
    const operatorsView = await app.operator.get(`/admin/users?tenantId=${other.tenantId}`);
    expect([operatorsView.status, operatorsView.body.items]).toEqual([200, []]);
    // A tenant-admin naming another tenant lists nothing, as on every other list.
    const foreign = await tenant.admin.get(`/admin/users?tenantId=${other.tenantId}`);
    expect([foreign.status, foreign.body.items]).toEqual([200, []]);
  });

  it("npm run user:invite prints a working invitation URL on its own standard output", async () => {
    const email = uniqueEmail("first");
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["dist/user-invite.js", email], {
      env: { PATH: process.env.PATH ?? "", ...app.env },
    });
    expect(stderr).toBe("");
    const lines = stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`^${PUBLIC_BASE_URL}/console/accept-invitation\\?token=[A-Za-z0-9_-]{43}$`),
    );
    expect((await acceptInvitation(app.url, lines[0]!, PASSWORD)).status).toBe(204);
    const session = await signIn(app.url, email, PASSWORD);
    expect([session.status, session.body.user.role]).toEqual([200, "operator"]);

    const refused = await promisify(execFile)(process.execPath, ["dist/user-invite.js", email], {
      env: { PATH: process.env.PATH ?? "", ...app.env },
    }).catch((error: { code: number; stdout: string; stderr: string }) => error);
    expect(refused).toMatchObject({ code: 1, stdout: "", stderr: expect.stringContaining("already exists") });
  });
});
