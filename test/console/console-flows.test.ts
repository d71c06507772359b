// The console in a real browser (Chromium via playwright-core) against the real API and worker,
// signed in with real users (api.md "Console and users"): invite → accept → sign in; connect a Yelp
// and a Thumbtack account through the fake OAuth server; the audit naming the user; a lead's timeline with its reply and CRM delivery; a dead
// delivery replayed from Failures; a tenant-viewer without write buttons whose writes the API
// refuses; tenant B's user blind to tenant A, by URL too; a wrong CSRF token refused. Screenshots of
// the overview, a lead timeline and the failures screen go to docs/console-screenshots/.
import type { BrowserContext, Page } from "playwright-core";
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { newPage, screenshot, useBrowser, usePublicOrigin } from "../support/browser.js";
import { accept, fromPage, invite, openScreen, signIn } from "../support/console-browser.js";
import type { FakeReply, ReceivedRequest } from "../support/fake-server.js";
import { useFakeOAuth, useFakeThumbtack } from "../support/fake-providers.js";
import { fixture } from "../support/fixtures.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import { waitFor } from "../support/wait.js";

const YELP_TOKEN = "yelp-platform-token-console-0123";
const BUSINESS = "consoleBiz_Yelp01";
const LEAD = "consoleLead_0001";
const CONSUMER_EVENTS = (fixture("yelp/api-lead-events.json").json as { events: unknown[] }).events;

describe("console in a browser: signed in", () => {
  const browser = useBrowser();
  const origin = usePublicOrigin();
  const oauth = useFakeOAuth();
  const thumbtack = useFakeThumbtack(oauth.reaches);
  /** Yelp: the access proof, subscriptions, the lead and its events, replies (recorded). */
  const events: unknown[] = [...CONSUMER_EVENTS];
  const subscribed = new Set<string>();
  const yelp = useFakeServer({ status: 404, body: {} }, (request: ReceivedRequest): FakeReply | undefined => {
    const url = new URL(request.path, "http://fake");
    const ids = /^\/v3\/businesses\/([^/]+)\/lead_ids$/.exec(url.pathname);
    if (ids)
      return oauth.reaches(request, decodeURIComponent(ids[1]!))
        ? { status: 200, body: { lead_ids: [], has_more: false } }
        : { status: 403, body: {} };
    if (url.pathname === "/v3/businesses/subscriptions") {
      if (request.method === "POST")
        for (const id of (JSON.parse(request.body) as { business_ids: string[] }).business_ids)
          subscribed.add(id);
      return request.method === "GET"
        ? {
            status: 200,
            body: {
              subscriptions: [...subscribed].map((id) => ({
                business_id: id,
                subscription_types: ["WEBHOOK"],
              })),
            },
          }
        : { status: 201, body: {} };
    }
    const lead = /^\/v3\/leads\/([^/]+)(\/events)?$/.exec(url.pathname);
    if (!lead) return undefined;
    if (request.method === "POST") {
      const { request_content: text } = JSON.parse(request.body) as { request_content: string };
      events.push({
        id: `ours-${events.length}`,
        cursor: `cursor-ours-${events.length}`,
        event_type: "TEXT",
        user_type: "BIZ",
        user_display_name: "Acme Plumbing",
        time_created: new Date().toISOString(),
        event_content: { text },
        channel: "API-SELF",
      });
      return { status: 201, body: {} };
    }
    if (lead[2]) return { status: 200, body: { events } };
    return { status: 200, body: { ...fixture("yelp/api-get-lead.json").json, id: lead[1] } };
  });
  /** The agency's CRM: refuses (400) until a test lets it accept. */
  const crmState = { accept: false };
  const crm = useFakeServer({ status: 400, body: {} }, () =>
    crmState.accept ? { status: 200, body: { ok: true } } : { status: 400, body: { error: "bad lead" } },
  );
  const app = useApp({
    worker: true,
    env: () => ({
      PUBLIC_BASE_URL: origin.url,
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      YELP_WEBHOOK_TOKEN: YELP_TOKEN,
      YELP_API_BASE_URL: yelp.url,
      THUMBTACK_API_BASE_URL: thumbtack.server.url,
      ...oauth.env(),
      DISPATCHER_INTERVAL_MS: "300",
      JOB_BACKOFF_BASE_MS: "50",
    }),
  });

  let a: Awaited<ReturnType<typeof createTenant>>;
  let b: Awaited<ReturnType<typeof createTenant>>;
  let admin: { context: BrowserContext; page: Page };
  let adminEmail: string;
  let connectionId: string;
  let leadId: string;
  const crmJob = () =>
    app.sql
      .query<{ id: string; status: string }>(
        "SELECT id, status FROM jobs WHERE tenant_id = $1 AND operation = 'crm-delivery'",
        [a.tenantId],
      )
      .then((result) => result.rows[0]);

  /** Two weeks of answered leads on the connection, for the overview's chart (older than 24 h). */
  const seedHistory = async () => {
    for (let day = 1; day <= 14; day++)
      for (let n = 0; n < 3; n++) {
        const seconds = 30 + ((day * 37 + n * 53) % 400);
        await app.sql.query(
          `INSERT INTO leads (tenant_id, connection_id, provider, external_lead_id, last_event_at, created_at,
                              received_at, provider_created_at, first_response_at, first_response_by,
                              first_response_seconds, first_response_business_seconds)
           VALUES ($1, $2, 'yelp', $3, $4, $4, $4, $4, $4::timestamptz + make_interval(secs => $5), 'auto', $5, $5)`,
          [
            a.tenantId,
            connectionId,
            `seed-${day}-${n}`,
            new Date(Date.now() - day * 86_400_000 - n * 3_600_000),
            seconds,
          ],
        );
      }
  };

  beforeAll(async () => {
    origin.forwardTo(app.url);
    a = await createTenant(app.url, "Acme Agency");
    b = await createTenant(app.url, "Bolt Agency");
  });

  afterAll(async () => {
    await admin?.context.close();
  });

  it("invite → accept → sign in", async () => {
    const invited = await invite(app.url, OPERATOR_KEY, "tenant-admin", a.tenantId);
    expect(invited.url.startsWith(`${origin.url}/console/accept-invitation?token=`)).toBe(true);
    admin = await newPage(browser());
    const { page } = admin;
    await page.goto(invited.url);
    await page.getByLabel("New password").fill("a long enough password");
    await page.getByLabel("Repeat the password").fill("a long enough password");
    await page.getByRole("button", { name: "Set password" }).click();
    await page.getByText("Your password is set").waitFor();
    await signIn(page, origin.url, invited.email, "a long enough password");
    adminEmail = invited.email;
    await page.getByText(`${invited.email} (tenant-admin)`).waitFor();
    // The invitation is single use.
    const again = await fetch(`${app.url}/console/api/invitations/accept`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ token: invited.token, password: "another long password" }),
    });
    expect(again.status).toBe(400);
  }, 60_000);

  it("connect a Yelp account through the fake OAuth server and see it connected", async () => {
    const { page } = admin;
    await openScreen(page, "Connections");
    await page.getByText("No connections yet.").waitFor();
    oauth.consentFor.yelp = BUSINESS;
    // The providers that connect by OAuth here (GET /admin/providers), in the registry's order.
    const select = page.getByRole("combobox", { name: /^Provider/ });
    const choices = select.locator("option");
    await choices.first().waitFor({ state: "attached" });
    expect(await choices.allTextContents()).toEqual(["Thumbtack", "Yelp"]);
    await select.selectOption("yelp");
    await page.getByLabel("Business id at the provider").fill(BUSINESS);
    await page.getByLabel("Name").fill("Acme Plumbing");
    await page.getByRole("button", { name: "Connect with Yelp" }).click();
    await page.getByText("The account is connected.").waitFor({ timeout: 20_000 });
    expect(new URL(page.url()).origin).toBe(origin.url);
    const row = page.getByRole("row", { name: /Acme Plumbing/ });
    await row.getByText("connected", { exact: true }).waitFor();
    const { rows } = await app.sql.query<{ id: string; oauth_status: string }>(
      "SELECT id, oauth_status FROM connections WHERE tenant_id = $1 AND external_account_id = $2",
      [a.tenantId, BUSINESS],
    );
    expect(rows).toEqual([{ id: expect.any(String), oauth_status: "connected" }]);
    connectionId = rows[0]!.id;
  }, 60_000);

  it("a lead arrives: its timeline shows the automatic reply and the (dead) CRM delivery with its attempts", async () => {
    const patched = await a.admin.patch(`/admin/connections/${connectionId}`, {
      settings: {
        autoResponse: {
          enabled: true,
          text: "Hi {{lead.firstName|there}}, thanks for asking Acme Plumbing!",
        },
        crmDestination: { url: `${crm.url}/hook` },
      },
    });
    expect([patched.status, patched.text]).toEqual([200, expect.any(String)]);
    const body = fixture("yelp/new-event.json").json as {
      data: { id: string; updates: { lead_id: string; event_id: string }[] };
    };
    body.data.id = BUSINESS;
    body.data.updates = body.data.updates.map((update) => ({
      ...update,
      lead_id: LEAD,
      event_id: `ev-${LEAD}`,
    }));
    expect((await post(`${app.url}/webhooks/yelp/${YELP_TOKEN}`, JSON.stringify(body))).status).toBe(202);
    await waitFor(crmJob, (job) => job?.status === "dead", 20_000);
    const { rows } = await app.sql.query<{ id: string }>("SELECT id FROM leads WHERE tenant_id = $1", [
      a.tenantId,
    ]);
    leadId = rows[0]!.id;
    const { page } = admin;
    await openScreen(page, "Leads");
    await page
      .getByRole("link", { name: /Marta|consoleLead/ })
      .first()
      .click();
    await page.getByRole("heading", { name: "Lead timeline" }).waitFor();
    await page.getByTestId("first-response").getByText("auto").waitFor();
    const reply = page.getByTestId("job-initial-response");
    await reply.getByText("succeeded", { exact: true }).waitFor();
    const delivery = page.getByTestId("job-crm-delivery");
    await delivery.getByText("dead", { exact: true }).waitFor();
    await delivery.getByRole("list", { name: "Attempts of crm-delivery" }).getByText(/#1/).waitFor();
    const replies = yelp.received.filter(
      (request) => request.method === "POST" && request.path === `/v3/leads/${LEAD}/events`,
    );
    expect(
      replies.map((request) => (JSON.parse(request.body) as { request_content: string }).request_content),
    ).toEqual(["Hi Marta, thanks for asking Acme Plumbing!"]);
  }, 60_000);

  it("a dead delivery is replayed from Failures and turns succeeded", async () => {
    const { page } = admin;
    await openScreen(page, "Failures");
    const group = page.getByTestId("failure-group").filter({ hasText: "crm-delivery" });
    await group.waitFor();
    await group.getByRole("button", { name: /crm-delivery/ }).click();
    await group.getByTestId("failed-job").waitFor();
    await screenshot(page, "failures");
    crmState.accept = true;
    await group.getByTestId("failed-job").getByRole("button", { name: "Replay" }).click();
    await waitFor(crmJob, (job) => job?.status === "succeeded", 20_000);
    await page.goto(`${origin.url}/console/jobs/${(await crmJob())!.id}`);
    await page.getByTestId("job-status").getByText("succeeded", { exact: true }).waitFor();
    expect(crm.received.filter((request) => request.path === "/hook")).toHaveLength(2);
    await page.goto(`${origin.url}/console/leads/${leadId}`);
    await page.getByTestId("job-crm-delivery").getByText("succeeded", { exact: true }).waitFor();
    await page.getByRole("list", { name: "Attempts of crm-delivery" }).getByText(/#2/).waitFor();
    await screenshot(page, "lead-timeline");
    await seedHistory();
    await openScreen(page, "Overview");
    await page.getByTestId("leads24h").getByText("1").waitFor();
    await page.getByRole("img", { name: /Median and p90/ }).waitFor();
    await screenshot(page, "overview");
  }, 60_000);

  it("a wrong CSRF token is refused and changes nothing; the right one works", async () => {
    const { page } = admin;
    const path = `/admin/connections/${connectionId}/pause`;
    expect(await fromPage(page, "POST", path, "not-the-token")).toEqual({
      status: 403,
      body: expect.objectContaining({ error: "csrf_failed" }),
    });
    expect((await fromPage(page, "POST", path, "")).status).toBe(403);
    const status = async () =>
      (
        await app.sql.query<{ status: string }>("SELECT status FROM connections WHERE id = $1", [
          connectionId,
        ])
      ).rows[0]!.status;
    expect(await status()).toBe("active");
    await page.goto(`${origin.url}/console/connections/${connectionId}`);
    await page.getByRole("button", { name: "Pause" }).click();
    await page.getByText("Connection paused.").waitFor();
    expect(await status()).toBe("paused");
    await page.getByRole("button", { name: "Resume" }).click();
    await page.getByText("Connection resumed.").waitFor();
    expect(await status()).toBe("active");
  }, 60_000);

  it("signing out ends the session on the server: the old cookie opens nothing", async () => {
    const user = await invite(app.url, OPERATOR_KEY, "tenant-admin", a.tenantId);
    await accept(app.url, user);
    const { context, page } = await newPage(browser());
    await signIn(page, origin.url, user.email);
    const cookie = (await context.cookies()).find((c) => c.name === "leadgate_session")!;
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: "Lax" });
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor();
    const replayed = await fetch(`${app.url}/console/api/session`, {
      headers: { cookie: `leadgate_session=${cookie.value}` },
    });
    expect(replayed.status).toBe(401);
    const { rows } = await app.sql.query(
      "SELECT count(*)::int AS n FROM sessions s JOIN users u ON u.id = s.user_id WHERE u.email = $1 AND s.revoked_at IS NULL",
      [user.email],
    );
    expect(rows).toEqual([{ n: 0 }]);
    await context.close();
  }, 60_000);

  it("a tenant-viewer sees no write buttons, and the API refuses its writes", async () => {
    const viewer = await invite(app.url, OPERATOR_KEY, "tenant-viewer", a.tenantId);
    await accept(app.url, viewer);
    const { context, page } = await newPage(browser());
    await signIn(page, origin.url, viewer.email);
    await page.goto(`${origin.url}/console/connections`);
    await page.getByRole("row", { name: /Acme Plumbing/ }).waitFor();
    expect(await page.getByRole("button", { name: /Connect with/ }).count()).toBe(0);
    await page.goto(`${origin.url}/console/connections/${connectionId}`);
    await page.getByRole("heading", { name: "Acme Plumbing" }).waitFor();
    for (const name of ["Pause", "Rotate secret", "Delete", "Sync now", "Save reply settings"])
      expect([name, await page.getByRole("button", { name }).count()]).toEqual([name, 0]);
    await page.goto(`${origin.url}/console/users`);
    await page.getByRole("heading", { name: "Users" }).waitFor();
    expect(await page.getByRole("button", { name: "Invite" }).count()).toBe(0);
    const refused = await fromPage(page, "POST", `/admin/connections/${connectionId}/pause`);
    expect(refused).toEqual({ status: 403, body: expect.objectContaining({ error: "forbidden" }) });
    const { rows } = await app.sql.query("SELECT status FROM connections WHERE id = $1", [connectionId]);
    expect(rows).toEqual([{ status: "active" }]);
    await context.close();
  }, 60_000);

  it("tenant B's user never sees tenant A's data, by URL too", async () => {
    const other = await invite(app.url, OPERATOR_KEY, "tenant-admin", b.tenantId);
    await accept(app.url, other);
    const { context, page } = await newPage(browser(), 375);
    await signIn(page, origin.url, other.email);
    await page.goto(`${origin.url}/console/leads`);
    await page.getByText("No leads yet.").waitFor();
    await page.goto(`${origin.url}/console/leads/${leadId}`);
    await page.getByRole("alert").filter({ hasText: "not_found" }).first().waitFor();
    await page.goto(`${origin.url}/console/connections/${connectionId}`);
    await page.getByRole("alert").filter({ hasText: "not_found" }).waitFor();
    await page.goto(`${origin.url}/console/failures?tenantId=${a.tenantId}`);
    await page.getByText("No dead jobs.").waitFor();
    expect((await fromPage(page, "GET", `/admin/leads?tenantId=${a.tenantId}`)).body.items).toEqual([]);
    expect(await page.getByText("Acme Plumbing").count()).toBe(0);
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(375);
    await context.close();
  }, 60_000);

  it("an operator switches between tenants with the tenant picker", async () => {
    const operator = await invite(app.url, OPERATOR_KEY, "operator");
    await accept(app.url, operator);
    const { context, page } = await newPage(browser());
    await signIn(page, origin.url, operator.email);
    await openScreen(page, "Leads");
    const picker = page.getByLabel("Tenant");
    await picker.selectOption({ label: "Acme Agency" });
    await page
      .getByRole("link", { name: /Marta|consoleLead/ })
      .first()
      .waitFor();
    expect(new URL(page.url()).searchParams.get("tenantId")).toBe(a.tenantId);
    await picker.selectOption({ label: "Bolt Agency" });
    await page.getByText("No leads yet.").waitFor();
    await context.close();
  }, 60_000);

  it("connect a Thumbtack account through the fake OAuth server: connected, its webhook registered", async () => {
    const { page } = admin;
    await openScreen(page, "Connections");
    const business = "770012345";
    oauth.consentFor.thumbtack = business;
    await page.getByRole("combobox", { name: /^Provider/ }).selectOption("thumbtack");
    await page.getByLabel("Business id at the provider").fill(business);
    await page.getByLabel("Name").fill("Acme Roofing");
    await page.getByRole("button", { name: "Connect with Thumbtack" }).click();
    await page.getByText("The account is connected.").waitFor({ timeout: 20_000 });
    await page
      .getByRole("row", { name: /Acme Roofing/ })
      .getByText("connected", { exact: true })
      .waitFor();
    const { rows } = await app.sql.query(
      "SELECT provider, oauth_status FROM connections WHERE tenant_id = $1 AND external_account_id = $2",
      [a.tenantId, business],
    );
    expect(rows).toEqual([{ provider: "thumbtack", oauth_status: "connected" }]);
    await waitFor(
      () => Promise.resolve(thumbtack.hooks(business).length),
      (n) => n === 1,
      20_000,
    );
  }, 60_000);

  it("the audit screen names the user behind an action by e-mail", async () => {
    const { page } = admin;
    await openScreen(page, "Audit");
    const row = page.getByRole("row", { name: /connection\.oauth-connect/ }).filter({ hasText: adminEmail });
    await row.first().waitFor();
    const { rows } = await app.sql.query(
      `SELECT count(*)::int AS n FROM audit_entries e JOIN users u ON u.id = e.user_id
       WHERE e.tenant_id = $1 AND e.action = 'connection.oauth-connect' AND u.email = $2`,
      [a.tenantId, adminEmail],
    );
    expect(await row.count()).toBe(rows[0]!.n);
    expect(rows[0]!.n).toBe(2);
  }, 60_000);
});
