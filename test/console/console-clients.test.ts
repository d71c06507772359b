// Clients in the console, in a real browser against the real API, signed in as a tenant-admin: a
// client created from the Clients screen (a bad time zone refused with the API's reason beside the
// field), its defaults saved (a response target), a connection moved to it from the connection's
// screen, whose reply editor then shows the client's target with source "client"; branding saved and
// a bad logo URL refused beside its field; delete refused while it has a connection (409
// client_in_use, said in words); the client picker narrowing the connections list (?clientId).
import type { BrowserContext, Page } from "playwright-core";
import { type Admin, adminAs, OPERATOR_KEY } from "../support/admin.js";
import { newPage, screenshot, useBrowser, usePublicOrigin } from "../support/browser.js";
import { accept, invite, openScreen, signIn } from "../support/console-browser.js";
import { useApp } from "../support/harness.js";

describe("console in a browser: clients", () => {
  const browser = useBrowser();
  const origin = usePublicOrigin();
  const app = useApp({
    env: () => ({ PUBLIC_BASE_URL: origin.url, LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY }),
  });
  let admin: Admin;
  let tenantId: string;
  let yelpId: string;
  let session: { context: BrowserContext; page: Page };

  beforeAll(async () => {
    origin.forwardTo(app.url);
    const yelp = await app.createConnection({
      provider: "yelp",
      externalAccountId: "clientsBiz_01",
      displayName: "Roof leads (Yelp)",
      inboundAuth: { type: "none" },
      credentials: { accessToken: "yelp-access-token" },
    });
    tenantId = yelp.tenantId;
    yelpId = yelp.connectionId;
    admin = adminAs(app.url, OPERATOR_KEY);
    const form = await admin.post("/admin/connections", {
      tenantId,
      provider: "staticforms",
      externalAccountId: "plumbing-form",
      displayName: "Plumbing form",
      inboundAuth: { type: "bearer" },
    });
    expect(form.status).toBe(201);
    const user = await invite(app.url, OPERATOR_KEY, "tenant-admin", tenantId);
    await accept(app.url, user);
    session = await newPage(browser());
    await signIn(session.page, origin.url, user.email);
  });

  afterAll(async () => {
    await session?.context.close();
  });

  const clientNamed = async (name: string) => {
    const list = await admin.get(`/admin/clients?tenantId=${tenantId}`);
    return (list.body.items as { id: string; name: string }[]).find((c) => c.name === name);
  };

  it("a client created, given a response target; a connection moved to it shows that target with source client", async () => {
    const { page } = session;
    await openScreen(page, "Clients");
    const add = page.getByRole("form", { name: "Add a client" });
    await add.getByLabel("Client name").fill("Acme Roofing");
    await add.getByLabel(/^Time zone/).fill("Mars/Olympus");
    await add.getByRole("button", { name: "Add client" }).click();
    // The API's reason, beside the field it names; nothing created.
    await page.getByTestId("error-timezone").waitFor();
    expect(await clientNamed("Acme Roofing")).toBeUndefined();
    await add.getByLabel(/^Time zone/).fill("America/Chicago");
    await add.getByRole("button", { name: "Add client" }).click();
    await page.getByText("Client “Acme Roofing” added.").waitFor();
    const acme = (await clientNamed("Acme Roofing"))!;
    expect(acme).toBeDefined();

    await page.getByRole("link", { name: "Acme Roofing" }).click();
    await page.getByRole("heading", { name: "Acme Roofing", level: 2 }).waitFor();
    const defaults = page.getByRole("form", { name: "Client defaults" });
    await defaults.getByLabel(/^Response target/).fill("90");
    await defaults.getByRole("button", { name: "Save defaults" }).click();
    await page.getByText("Defaults saved.").waitFor();
    expect((await admin.get(`/admin/clients/${acme.id}`)).body.defaults).toMatchObject({
      responseTarget: { seconds: 90 },
    });

    // The connection's screen: its client, moved to Acme Roofing.
    await page.goto(`${origin.url}/console/connections/${yelpId}`);
    const target = page.getByTestId("source-responseTarget");
    await target.getByText(/source: tenant|source: default/).waitFor();
    const move = page.getByRole("form", { name: "Move to another client" });
    await move.getByLabel("Client").selectOption({ label: "Acme Roofing" });
    await move.getByRole("button", { name: "Move to this client" }).click();
    await page.getByText("Moved to Acme Roofing: it inherits that client's defaults.").waitFor();
    await target.getByText("Response target: 90 s · source: client (the client's defaults)").waitFor();
    const view = await admin.get(`/admin/connections/${yelpId}`);
    expect(view.body.clientId).toBe(acme.id);
    expect(view.body.effectiveSettings).toMatchObject({
      responseTarget: { seconds: 90 },
      source: { responseTarget: "client" },
    });
    await screenshot(page, "connection-client");
  }, 60_000);

  it("branding saved, a bad logo URL refused beside its field; delete refused while the client has a connection", async () => {
    const { page } = session;
    const acme = (await clientNamed("Acme Roofing"))!;
    await page.goto(`${origin.url}/console/clients/${acme.id}`);
    const details = page.getByRole("form", { name: "Client details" });
    await details.getByLabel(/^Display name/).fill("Acme Roofing & Gutters");
    await details.getByLabel(/^Logo URL/).fill("http://acme.test/logo.png");
    await details.getByLabel(/^Accent color/).fill("#1a73e8");
    await details.getByRole("button", { name: "Save client" }).click();
    await page.getByTestId("error-branding.logoUrl").getByText(/https/).waitFor();
    await details.getByLabel(/^Logo URL/).fill("https://acme.test/logo.png");
    await details.getByLabel(/^Client name/).fill("Acme Roofing Co");
    await details.getByRole("button", { name: "Save client" }).click();
    await page.getByText("Client saved.").waitFor();
    const saved = (await admin.get(`/admin/clients/${acme.id}`)).body;
    expect(saved).toMatchObject({
      name: "Acme Roofing Co",
      branding: {
        displayName: "Acme Roofing & Gutters",
        logoUrl: "https://acme.test/logo.png",
        accentColor: "#1a73e8",
      },
    });
    await page.getByRole("button", { name: "Delete client" }).click();
    await page.getByRole("button", { name: "Yes, delete client" }).click();
    const refused = page.getByTestId("delete-refused");
    await refused.getByText(/cannot be deleted: it still has connections that are not disabled/).waitFor();
    await refused.getByText(/client_in_use/).waitFor();
    expect((await admin.get(`/admin/clients/${acme.id}`)).status).toBe(200);
    await screenshot(page, "client-detail");
  }, 60_000);

  it("the client picker narrows the connections list; All clients shows every one", async () => {
    const { page } = session;
    await openScreen(page, "Connections");
    const table = page.getByRole("table");
    await table.getByRole("link", { name: "Plumbing form" }).waitFor();
    await table.getByRole("link", { name: "Roof leads (Yelp)" }).waitFor();
    await page.getByRole("combobox", { name: /^Client/ }).selectOption({ label: "Acme Roofing Co" });
    await page.waitForURL(/clientId=/);
    await table.getByRole("link", { name: "Plumbing form" }).waitFor({ state: "detached" });
    await table.getByRole("link", { name: "Roof leads (Yelp)" }).waitFor();
    expect(await table.getByRole("row").count()).toBe(2); // the header and Acme's one connection
    // The choice is kept across screens.
    await openScreen(page, "Leads");
    expect(new URL(page.url()).searchParams.get("clientId")).toBe((await clientNamed("Acme Roofing Co"))!.id);
    await openScreen(page, "Connections");
    await table.getByRole("link", { name: "Plumbing form" }).waitFor({ state: "detached" });
    await page.getByRole("combobox", { name: /^Client/ }).selectOption({ label: "All clients" });
    await table.getByRole("link", { name: "Plumbing form" }).waitFor();
    await table.getByRole("link", { name: "Roof leads (Yelp)" }).waitFor();
    await screenshot(page, "connections-all-clients");
  }, 60_000);
});
