// The console's write screens in a real browser, signed in as a tenant-admin: the reply template's
// live preview and its business hours saved; a save that sends only the parts changed (an inherited
// part stays inherited), an own part inheriting again, a refusal's reasons shown; a rotated secret shown once that works at once; a
// notification channel added, tested (its outcome shown) and deleted; an alert acknowledged and
// resolved; a filtered set of dead deliveries replayed after its dry-run count, with its progress; a
// password changed (the user's other session ends).
import type { BrowserContext, Page } from "playwright-core";
import { type Admin, adminAs, OPERATOR_KEY, staticFormsDelivery } from "../support/admin.js";
import { newPage, useBrowser, usePublicOrigin } from "../support/browser.js";
import { accept, invite, openScreen, PASSWORD, signIn } from "../support/console-browser.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import { waitFor } from "../support/wait.js";

describe("console in a browser: the write screens", () => {
  const browser = useBrowser();
  const origin = usePublicOrigin();
  const receiver = useFakeServer({ status: 200, body: {} });
  const crmState = { accept: false };
  const crm = useFakeServer({ status: 400, body: {} }, () =>
    crmState.accept ? { status: 200, body: {} } : { status: 400, body: { error: "nope" } },
  );
  const app = useApp({
    worker: true,
    env: () => ({
      PUBLIC_BASE_URL: origin.url,
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      DISPATCHER_INTERVAL_MS: "300",
      JOB_BACKOFF_BASE_MS: "50",
    }),
  });
  let a: { tenantId: string; admin: Admin };
  let yelpId: string;
  let formId: string;
  let session: { context: BrowserContext; page: Page };
  let me: string;

  beforeAll(async () => {
    origin.forwardTo(app.url);
    // A Yelp connection with pasted credentials, made through the service (no Yelp to prove them to).
    const yelp = await app.createConnection({
      provider: "yelp",
      externalAccountId: "screensBiz_01",
      displayName: "Acme Plumbing",
      inboundAuth: { type: "none" },
      credentials: { accessToken: "yelp-access-token" },
    });
    a = { tenantId: yelp.tenantId, admin: adminAs(app.url, OPERATOR_KEY) };
    yelpId = yelp.connectionId;
    const form = await a.admin.post("/admin/connections", {
      tenantId: a.tenantId,
      provider: "staticforms",
      externalAccountId: "contact-form",
      displayName: "Contact form",
      inboundAuth: { type: "bearer" },
      settings: { crmDestination: { url: `${crm.url}/hook` } },
    });
    expect(form.status).toBe(201);
    formId = form.body.connection.id as string;
    const user = await invite(app.url, OPERATOR_KEY, "tenant-admin", a.tenantId);
    await accept(app.url, user);
    me = user.email;
    session = await newPage(browser());
    await signIn(session.page, origin.url, user.email);
  });

  afterAll(async () => {
    await session?.context.close();
  });

  it("the reply template: a live preview of the unsaved text; saved with business hours", async () => {
    const { page } = session;
    await page.goto(`${origin.url}/console/connections/${yelpId}`);
    await page.getByLabel("Send an automatic first reply").check();
    await page.getByLabel(/^Reply text/).fill("Hello {{lead.firstName|there}}, we got your request!");
    await page
      .getByTestId("preview-text")
      .getByText(/^Hello .+, we got your request!$/)
      .waitFor();
    await page.getByLabel("Always open").uncheck();
    await page.getByLabel("Time zone").fill("America/Chicago");
    await page.getByLabel(/^mon/).fill("08:00-12:00, 13:00-18:00");
    await page.getByRole("button", { name: "Save reply settings" }).click();
    await page.getByText("Saved.").waitFor();
    const { rows } = await app.sql.query<{ settings: Record<string, unknown> }>(
      "SELECT settings FROM connections WHERE id = $1",
      [yelpId],
    );
    expect(rows[0]!.settings).toMatchObject({
      autoResponse: { enabled: true, text: "Hello {{lead.firstName|there}}, we got your request!" },
      businessHours: {
        timezone: "America/Chicago",
        weekly: {
          mon: [
            ["08:00", "12:00"],
            ["13:00", "18:00"],
          ],
          tue: [],
        },
      },
    });
  }, 60_000);

  it("the reply settings: a save sends only what changed (the delay kept, inherited hours still inherited); an own part inherits again; a refusal says why", async () => {
    const { page } = session;
    const tenantHours = (mon: string[]) => ({ timezone: "America/Denver", weekly: { mon: [mon] } });
    const setTenantHours = async (mon: string[]) =>
      expect(
        (
          await a.admin.patch(`/admin/tenants/${a.tenantId}`, {
            defaults: { businessHours: tenantHours(mon) },
          })
        ).status,
      ).toBe(200);
    await setTenantHours(["09:00", "17:00"]);
    const created = await a.admin.post("/admin/connections", {
      tenantId: a.tenantId,
      provider: "thumbtack",
      externalAccountId: "700000000000000077",
      displayName: "Acme Roofing",
      inboundAuth: { type: "basic" },
      settings: {
        autoResponse: {
          enabled: true,
          text: "Hi {{lead.firstName|there}}",
          afterHoursText: "Closed",
          delaySeconds: 30,
        },
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.connection.id as string;
    const stored = async () =>
      (
        await app.sql.query<{ settings: Record<string, unknown> }>(
          "SELECT settings FROM connections WHERE id = $1",
          [id],
        )
      ).rows[0]!.settings;
    const sources = async () =>
      (await a.admin.get(`/admin/connections/${id}`)).body.effectiveSettings.source as Record<string, string>;
    const save = () => page.getByRole("button", { name: "Save reply settings" }).click();
    const said = (text: string | RegExp) => page.getByRole("status").getByText(text).waitFor();
    const refused = (text: RegExp) => page.getByRole("alert").getByText(text).waitFor();

    await page.goto(`${origin.url}/console/connections/${id}`);
    await page
      .getByTestId("source-businessHours")
      .getByText(/Inherited from the tenant's defaults/)
      .waitFor();
    await page
      .getByTestId("source-autoResponse")
      .getByText("This connection's own reply settings.")
      .waitFor();
    expect(await page.getByLabel(/^Wait before sending/).inputValue()).toBe("30");
    expect(await page.getByLabel(/^mon/).inputValue()).toBe("09:00-17:00");

    // Only the text changed: the delay and the after-hours text stay, the hours stay the tenant's.
    await page.getByLabel(/^Reply text/).fill("Hello {{lead.firstName|friend}}");
    await save();
    await said("Saved.");
    const own = {
      enabled: true,
      text: "Hello {{lead.firstName|friend}}",
      afterHoursText: "Closed",
      delaySeconds: 30,
    };
    expect(await stored()).toEqual({ autoResponse: own });
    expect(await sources()).toMatchObject({ autoResponse: "connection", businessHours: "tenant" });

    // A template the API refuses: the page says which field, what is wrong and where; nothing saved.
    await page.getByLabel(/^Reply text/).fill("Hello {{lead.nickname}}");
    await save();
    const refusal = page.getByRole("alert").filter({ hasText: "validation_failed" }).first();
    await refusal.getByText(/unknown merge field "lead\.nickname" at position 6/).waitFor();
    expect(await refusal.innerText()).toContain("settings.autoResponse.text");
    // A delay the field cannot read is refused here, not sent as "no delay".
    await page.getByLabel(/^Reply text/).fill("Hello {{lead.firstName|friend}}");
    await page.getByLabel(/^Wait before sending/).fill("");
    await page.getByLabel(/^Wait before sending/).pressSequentially("1e");
    await save();
    await refused(/must be a whole number of seconds/);
    expect(await stored()).toEqual({ autoResponse: own });
    await page.getByLabel(/^Wait before sending/).fill("30");

    // The tenant's hours change meanwhile: the inherited, unedited hours show them after the next save.
    await setTenantHours(["10:00", "16:00"]);
    await page.getByLabel(/^Reply text/).fill("Hello again {{lead.firstName|friend}}");
    await save();
    await said("Saved.");
    await waitFor(
      () => page.getByLabel(/^mon/).inputValue(),
      (value) => value === "10:00-16:00",
    );

    // An unsaved edit of the hours survives the reply settings' return to inheriting, and is sent next.
    await page.getByLabel(/^tue/).fill("09:00-12:00");
    await page.getByRole("button", { name: "Inherit the reply settings" }).click();
    await page.getByRole("button", { name: "Yes, inherit the reply settings" }).click();
    await said("Saved: inheriting the defaults.");
    expect(await stored()).toEqual({});
    expect(await sources()).toMatchObject({ autoResponse: "default", businessHours: "tenant" });
    await page
      .getByTestId("source-autoResponse")
      .getByText(/no automatic reply is sent/)
      .waitFor();
    expect(await page.getByLabel(/^Reply text/).inputValue()).toBe("");
    expect(await page.getByLabel("Send an automatic first reply").isChecked()).toBe(false);
    await save();
    await said("Saved.");
    expect(await stored()).toEqual({
      businessHours: {
        timezone: "America/Denver",
        weekly: expect.objectContaining({ mon: [["10:00", "16:00"]], tue: [["09:00", "12:00"]] }),
      },
    });

    // A delay of 0 is no delay: typing it changes nothing.
    await page.getByLabel(/^Wait before sending/).fill("0");
    await save();
    await said("Nothing to save: no field changed.");

    // "Always open" on a connection whose tenant has hours: its own always-open week, not a null
    // (which would inherit the tenant's hours).
    await page.getByLabel("Always open").check();
    await save();
    await said("Saved.");
    expect((await stored()).businessHours).toMatchObject({
      timezone: "UTC",
      weekly: { mon: [["00:00", "24:00"]] },
    });
    const preview = await a.admin.post(`/admin/connections/${id}/reply-preview`, {
      at: "2026-12-06T03:00:00Z", // a Sunday night, closed for the tenant's hours
      autoResponse: { enabled: true, text: "open", afterHoursText: "closed" },
    });
    expect([preview.status, preview.body.variant]).toEqual([200, "business-hours"]);
    await page.reload();
    expect(await page.getByLabel("Always open").isChecked()).toBe(true);
    await page.getByTestId("source-businessHours").getByText("This connection's own hours.").waitFor();
    // Unchecked with no hours entered would be closed all week: refused, with what to do.
    await page.getByLabel("Always open").uncheck();
    await save();
    await refused(/Enter the hours of at least one day/);
    expect((await stored()).businessHours).toMatchObject({ timezone: "UTC" });
  }, 60_000);

  it("a rotated secret is shown once, with a copy button, and works at once", async () => {
    const { page } = session;
    await page.goto(`${origin.url}/console/connections/${formId}`);
    await page.getByRole("button", { name: "Rotate secret" }).click();
    const secret = await page.getByTestId("secret").innerText();
    await page.getByRole("button", { name: "Copy" }).waitFor();
    const delivered = await post(
      `${app.url}/webhooks/staticforms/${formId}`,
      JSON.stringify(staticFormsDelivery()),
      { authorization: `Bearer ${secret}` },
    );
    expect(delivered.status).toBe(202);
    await page.reload();
    await page.getByRole("heading", { name: "Contact form" }).waitFor();
    expect(await page.getByTestId("secret").count()).toBe(0);
    expect(await page.locator("body").innerText()).not.toContain(secret);
  }, 60_000);

  it("a filtered set of dead deliveries is replayed after its dry-run count, with its progress", async () => {
    const { rows: before } = await app.sql.query<{ id: string }>(
      "SELECT id FROM jobs WHERE tenant_id = $1 AND operation = 'crm-delivery'",
      [a.tenantId],
    );
    const secret = await (async () => {
      const rotated = await a.admin.post(`/admin/connections/${formId}/rotate-secret`, { graceSeconds: 0 });
      return rotated.body.secrets.bearerToken as string;
    })();
    for (let n = 0; n < 2; n++)
      expect(
        (
          await post(`${app.url}/webhooks/staticforms/${formId}`, JSON.stringify(staticFormsDelivery()), {
            authorization: `Bearer ${secret}`,
          })
        ).status,
      ).toBe(202);
    const dead = () =>
      app.sql
        .query<{ n: number }>(
          "SELECT count(*)::int AS n FROM jobs WHERE tenant_id = $1 AND operation = 'crm-delivery' AND status = 'dead'",
          [a.tenantId],
        )
        .then((result) => result.rows[0]!.n);
    const expected = before.length + 2;
    await waitFor(dead, (n) => n === expected, 20_000);
    const { page } = session;
    await openScreen(page, "Failures");
    const group = page.getByTestId("failure-group").filter({ hasText: "crm-delivery" });
    await group.getByRole("button", { name: "Replay all like these…" }).click();
    await group.getByText(`${expected} jobs match.`).waitFor();
    crmState.accept = true;
    await group.getByRole("button", { name: `Replay ${expected} jobs` }).click();
    await page.getByTestId("replay-progress").getByText(`${expected} succeeded`).waitFor({ timeout: 20_000 });
    expect(await dead()).toBe(0);
  }, 60_000);

  it("a notification channel: added (its secret shown once), tested with the outcome shown, deleted", async () => {
    const { page } = session;
    await openScreen(page, "Notification channels");
    await page.getByText("No channels").waitFor();
    await page.getByLabel("URL").fill(`${receiver.url}/alerts`);
    await page.getByRole("button", { name: "Add channel" }).click();
    expect((await page.getByTestId("secret").innerText()).startsWith("whsec_")).toBe(true);
    await page.getByRole("button", { name: "Send a test" }).click();
    await page
      .getByRole("status")
      .filter({ hasText: /^Delivered/ })
      .waitFor({ timeout: 20_000 });
    expect(receiver.received.filter((request) => request.path === "/alerts")).toHaveLength(1);
    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("button", { name: "Yes, delete" }).click();
    await page.getByText("No channels").waitFor();
    // The file's own database: this was its only channel.
    const { rows } = await app.sql.query("SELECT count(*)::int AS n FROM notification_channels");
    expect(rows).toEqual([{ n: 0 }]);
  }, 60_000);

  it("an alert is acknowledged, then resolved", async () => {
    const { rows } = await app.sql.query<{ id: string }>(
      `INSERT INTO alerts (tenant_id, type, connection_id, group_key, summary)
       VALUES ($1, 'job.dead', $2, 'console-test', 'Deliveries to the CRM are failing') RETURNING id`,
      [a.tenantId, formId],
    );
    const status = async () =>
      (await app.sql.query<{ status: string }>("SELECT status FROM alerts WHERE id = $1", [rows[0]!.id]))
        .rows[0]!.status;
    const { page } = session;
    await openScreen(page, "Alerts");
    await page.getByText("Deliveries to the CRM are failing").waitFor();
    await page.getByRole("button", { name: "Acknowledge" }).click();
    await waitFor(status, (s) => s === "acknowledged");
    await page.getByLabel("Status").selectOption("acknowledged");
    await page.getByRole("button", { name: "Resolve" }).click();
    await waitFor(status, (s) => s === "resolved");
    await page.getByText("No acknowledged alerts.").waitFor();
  }, 60_000);

  it("the password changed from the Change password screen: a wrong current one is said so; the other session ends, this one goes on", async () => {
    const user = await invite(app.url, OPERATOR_KEY, "tenant-admin", a.tenantId);
    await accept(app.url, user);
    const { context, page } = await newPage(browser());
    await signIn(page, origin.url, user.email);
    const other = await fetch(`${app.url}/console/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: user.email, password: PASSWORD }),
    });
    const otherCookie = other.headers.get("set-cookie")!.split(";")[0]!;
    const otherSession = () =>
      fetch(`${app.url}/console/api/session`, { headers: { cookie: otherCookie } }).then((r) => r.status);
    expect(await otherSession()).toBe(200);

    await page.getByRole("link", { name: "Change password" }).click();
    await page.getByRole("heading", { name: "Change password", level: 1 }).waitFor();
    const form = page.getByRole("form", { name: "Change password" });
    const fill = async (current: string, next: string, again = next) => {
      await form.getByLabel("Current password").fill(current);
      await form.getByLabel("New password", { exact: true }).fill(next);
      await form.getByLabel("Repeat the new password").fill(again);
    };
    const NEW = "the console's new passphrase";
    await fill(PASSWORD, NEW, `${NEW}!`);
    await form.getByRole("alert").filter({ hasText: "The new passwords differ." }).waitFor();
    expect(await form.getByRole("button", { name: "Change password" }).isDisabled()).toBe(true);
    await fill("not my password", NEW);
    await form.getByRole("button", { name: "Change password" }).click();
    await form.getByRole("alert").filter({ hasText: "The current password is wrong." }).waitFor();
    expect(await otherSession()).toBe(200);

    await fill(PASSWORD, NEW);
    await form.getByRole("button", { name: "Change password" }).click();
    await form.getByRole("status").filter({ hasText: "Your password is changed." }).waitFor();
    expect(await otherSession()).toBe(401);
    // This console goes on.
    await page.getByRole("navigation", { name: "Screens" }).getByRole("link", { name: "Users" }).click();
    await page.getByRole("heading", { name: "Users", level: 1 }).waitFor();
    const again = await fetch(`${app.url}/console/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: user.email, password: NEW }),
    });
    expect(again.status).toBe(200);
    await context.close();
  }, 60_000);

  it("a user invited from the Users screen, then re-invited: the new link works, the old not; disabling them sends their console to sign-in", async () => {
    const { page } = session;
    await openScreen(page, "Users");
    const email = `new-${Date.now()}@agency.test`;
    await page.getByRole("form", { name: "Invite a user" }).getByLabel("E-mail").fill(email);
    await page.getByLabel("Role").selectOption("tenant-viewer");
    await page.getByRole("button", { name: "Invite" }).click();
    const first = await page.getByRole("status", { name: `Invitation link for ${email}` }).innerText();
    const row = page.getByRole("row", { name: new RegExp(email) });
    await row.getByRole("button", { name: "New invitation" }).click();
    const renewed = page.getByRole("status", { name: `New invitation link for ${email}` });
    await renewed.getByRole("button", { name: "Copy link" }).waitFor();
    const url = await renewed.getByTestId("invitation-url").innerText();
    expect(url.startsWith(`${origin.url}/console/accept-invitation?token=`)).toBe(true);
    expect(first).not.toContain(url);
    const token = (link: string) => new URL(link).searchParams.get("token")!;
    const old = first.match(/https?:\/\/\S+/)![0];
    await expect(accept(app.url, { email, url: old, token: token(old) })).rejects.toThrow(/^accept: 400/);
    await accept(app.url, { email, url, token: token(url) });
    // One's own row offers no Disable (the API refuses it too).
    expect(
      await page
        .getByRole("row", { name: new RegExp(me) })
        .getByRole("button", { name: "Disable" })
        .count(),
    ).toBe(0);
    const other = await newPage(browser());
    await signIn(other.page, origin.url, email);
    await page.reload();
    await row.getByRole("button", { name: "Disable" }).click();
    await row.getByRole("button", { name: "Yes, disable" }).click();
    await waitFor(
      async () => (await other.page.request.get(`${origin.url}/console/api/session`)).status(),
      (status) => status === 401,
    );
    // Their open console finds out on the next click: the sign-in screen says the session ended.
    await other.page
      .getByRole("navigation", { name: "Screens" })
      .getByRole("link", { name: "Leads" })
      .click();
    await other.page.getByRole("heading", { name: "Sign in to Leadgate" }).waitFor();
    await other.page.getByRole("status").filter({ hasText: "Your session ended" }).waitFor();
    expect(new URL(other.page.url()).searchParams.get("next")).toBe("/leads");
    await other.context.close();
  }, 60_000);
});
