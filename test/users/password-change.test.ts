// Changing one's password (api.md "Console and users": POST /console/api/password): with the
// session and its X-CSRF-Token, the current password and a new one; the user's other sessions end;
// a wrong current password counts toward sign-in throttling; a new password that may not be chosen
// writes nothing. The file's API trusts 127.0.0.1 as a proxy, so each call names its client address.
import { OPERATOR_KEY } from "../support/admin.js";
import { callWithCookie, PASSWORD, signedInUser, signIn } from "../support/console.js";
import { useApp } from "../support/harness.js";

const NEW_PASSWORD = "a brand new passphrase 42";

describe("changing one's password", () => {
  const app = useApp({ env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY, TRUST_PROXY: "127.0.0.1" } });
  const hashOf = async (id: string) =>
    (await app.sql.query<{ h: string }>("SELECT password_hash AS h FROM users WHERE id = $1", [id])).rows[0]!
      .h;
  type User = Awaited<ReturnType<typeof signedInUser>>;
  /** The change as the console sends it, from `ip`; `csrf: null` sends no X-CSRF-Token. */
  const change = (user: User, body: unknown, ip = "192.0.2.1", csrf: string | null = user.csrf) =>
    callWithCookie(app.url, user.cookie, "POST", "/console/api/password", {
      csrf: csrf ?? undefined,
      body,
      headers: { "x-forwarded-for": ip },
    });

  it("changes the password and ends the user's other sessions, not the one that changed it", async () => {
    const user = await signedInUser(app.url, { role: "operator" });
    const other = await signIn(app.url, user.email, PASSWORD, "192.0.2.20");
    expect(other.status).toBe(200);
    const before = await hashOf(user.id);

    const changed = await change(user, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD });
    expect([changed.status, changed.text]).toEqual([204, ""]);
    expect(await hashOf(user.id)).not.toBe(before);
    expect(await hashOf(user.id)).toMatch(/^\$argon2id\$/);
    expect((await user.get("/console/api/session")).status).toBe(200);
    expect((await user.get("/admin/users")).status).toBe(200);
    expect((await callWithCookie(app.url, other.cookie!, "GET", "/admin/users")).status).toBe(401);
    const revoked = await app.sql.query(
      "SELECT count(*) FILTER (WHERE revoked_at IS NULL)::int AS live, count(*)::int AS all FROM sessions WHERE user_id = $1",
      [user.id],
    );
    expect(revoked.rows[0]).toEqual({ live: 1, all: 2 });

    expect((await signIn(app.url, user.email, PASSWORD, "192.0.2.21")).status).toBe(401);
    expect((await signIn(app.url, user.email, NEW_PASSWORD, "192.0.2.21")).status).toBe(200);
  });

  it("a wrong current password is 401 invalid_credentials, changes nothing, and counts toward sign-in throttling", async () => {
    const user = await signedInUser(app.url, { role: "operator" });
    const other = await signIn(app.url, user.email, PASSWORD, "192.0.2.30");
    const before = await hashOf(user.id);
    const ip = "192.0.2.31";
    for (let i = 0; i < 5; i++) {
      const wrong = await change(user, { currentPassword: `not it ${i}`, newPassword: NEW_PASSWORD }, ip);
      expect([wrong.status, wrong.body.error]).toEqual([401, "invalid_credentials"]);
    }
    // The pair (the user's e-mail, this address) is locked now: the change and a sign-in alike.
    const locked = await change(user, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }, ip);
    expect([locked.status, locked.body.error, Number(locked.headers.get("retry-after"))]).toEqual([
      429,
      "rate_limited",
      expect.any(Number),
    ]);
    expect((await signIn(app.url, user.email, PASSWORD, ip)).status).toBe(429);
    expect(await hashOf(user.id)).toBe(before);
    // Still signed in, both sessions; another address is not locked.
    expect((await user.get("/console/api/session")).status).toBe(200);
    expect((await callWithCookie(app.url, other.cookie!, "GET", "/console/api/session")).status).toBe(200);
    expect(
      (await change(user, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }, "192.0.2.32")).status,
    ).toBe(204);
  });

  it("a new password that may not be chosen (as on invitation acceptance) is 400 validation_failed: nothing written, nothing counted", async () => {
    const user = await signedInUser(app.url, { role: "operator" });
    const other = await signIn(app.url, user.email, PASSWORD, "192.0.2.40");
    const before = await hashOf(user.id);
    const ip = "192.0.2.41";
    for (const [newPassword, problem] of [
      ["eleven char", "must be at least 12 characters"],
      [user.email, "must not be the e-mail address"],
      [` ${user.email.toUpperCase()} `, "must not be the e-mail address"],
      ["short", "must be at least 12 characters"],
      ["tiny", "must be at least 12 characters"],
      ["x", "must be at least 12 characters"],
    ] as const) {
      // A wrong current password too: the new one is refused before the current one is checked.
      const refused = await change(user, { currentPassword: "not it", newPassword }, ip);
      expect([refused.status, refused.body.error, refused.body.details]).toEqual([
        400,
        "validation_failed",
        { newPassword: [problem] },
      ]);
    }
    const notString = await change(user, { currentPassword: PASSWORD, newPassword: 42 }, ip);
    expect([notString.status, Object.keys(notString.body.details)]).toEqual([400, ["newPassword"]]);
    expect(await hashOf(user.id)).toBe(before);
    expect((await callWithCookie(app.url, other.cookie!, "GET", "/console/api/session")).status).toBe(200);
    // Seven refusals from one address, none counted: the change passes from it.
    expect((await change(user, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }, ip)).status).toBe(
      204,
    );
  });

  it("needs the session and its X-CSRF-Token; an API key has no password to change", async () => {
    const user = await signedInUser(app.url, { role: "operator" });
    const before = await hashOf(user.id);
    const body = { currentPassword: PASSWORD, newPassword: NEW_PASSWORD };
    const noCsrf = await change(user, body, "192.0.2.50", null);
    expect([noCsrf.status, noCsrf.body.error]).toEqual([403, "csrf_failed"]);
    const wrongCsrf = await change(user, body, "192.0.2.50", `${user.csrf}x`);
    expect([wrongCsrf.status, wrongCsrf.body.error]).toEqual([403, "csrf_failed"]);
    const noSession = await fetch(`${app.url}/console/api/password`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(noSession.status).toBe(401);
    const byKey = await app.operator.post("/console/api/password", body);
    expect(byKey.status).toBe(401);
    expect(await hashOf(user.id)).toBe(before);
  });
});
