// An email channel cannot be pointed at someone else's mailbox. A new email channel
// is pending_confirmation until its address opens the mailed link and presses the button (a GET
// confirms nothing: a mail scanner that opens links does not); only active channels receive alerts.
// Tokens are single use, expire after 7 days, are stored hashed, and failed ones count against the
// pre-auth budget. A real SMTP server on loopback receives the mails.
import { createHash } from "node:crypto";
import { AlertBook } from "../../src/alerts/alert-book.js";
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { confirmationLink, type Mail, useSmtpServer } from "../support/smtp.js";
import { waitFor } from "../support/wait.js";

const PUBLIC_BASE_URL = "https://leadgate.agency.example";
const CONFIRM_PATH = "/notification-channels/confirm";

type Tenant = Awaited<ReturnType<typeof createTenant>>;

describe("email channels: confirmation", () => {
  const smtp = useSmtpServer();
  const receiver = useFakeServer({ status: 204 });
  const app = useApp({
    worker: true,
    env: () => ({
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      PUBLIC_BASE_URL,
      SMTP_URL: smtp.url,
      ALERT_EMAIL_FROM: "Leadgate <alerts@leadgate.example>",
      DISPATCHER_INTERVAL_MS: "300",
      JOB_BACKOFF_BASE_MS: "50",
    }),
  });

  /** The link's path and query on this test's API (the link itself names PUBLIC_BASE_URL). */
  const local = (link: URL) => `${app.url}${link.pathname}${link.search}`;
  const mailsTo = (address: string, count: number) =>
    waitFor(
      () => Promise.resolve(smtp.to(address)),
      (mails) => mails.length >= count,
    );
  const statusOf = async (channelId: string) =>
    (
      await app.sql.query<{ status: string }>("SELECT status FROM notification_channels WHERE id = $1", [
        channelId,
      ])
    ).rows[0]?.status;
  /** What a browser sends for the page's form (no fields): an empty urlencoded body. */
  const pressButton = (url: string) =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "",
    });
  const emailChannel = async (tenant: Tenant, address: string) => {
    const created = await tenant.admin.post("/admin/notification-channels", { type: "email", address });
    expect(created.status).toBe(201);
    return created.body.channel as { id: string; status: string };
  };
  const raise = (tenantId: string, errorCode: string) =>
    app.api.app.get(AlertBook, { strict: false }).raise(undefined, {
      tenantId,
      type: "job.dead",
      connectionId: null,
      operation: "crm-delivery",
      errorCode,
      summary: `A job died with ${errorCode}.`,
    });
  const alertMails = (address: string) =>
    smtp.to(address).filter((mail: Mail) => mail.text.includes("Subject: [Leadgate] Alert"));
  /** The subjects of the mails to `address`, in order. */
  const subjectsTo = (address: string) =>
    smtp.to(address).map((mail: Mail) => /^Subject: (.*)$/m.exec(mail.text)?.[1]);
  const CONFIRMATION = "Confirm Leadgate alerts to this address";
  const TEST = "Leadgate test notification";
  /**
   * A test notification (sent before the route answers): the next mail to the channel's address. A
   * mail that an earlier call should not have sent would have arrived before it.
   */
  const marker = async (tenant: Tenant, channelId: string) => {
    const tested = await tenant.admin.post(`/admin/notification-channels/${channelId}/test`);
    expect([tested.status, tested.body]).toEqual([200, { delivered: true }]);
  };

  it("a new email channel is pending_confirmation and gets no alert; the GET page confirms nothing; its button's POST confirms it (200), and alerts follow", async () => {
    const tenant = await createTenant(app.url);
    const address = "ops@agency.example";
    const channel = await emailChannel(tenant, address);
    expect(channel.status).toBe("pending_confirmation");
    const listed = await tenant.admin.get("/admin/notification-channels");
    expect(listed.body.items).toEqual([
      expect.objectContaining({ id: channel.id, status: "pending_confirmation" }),
    ]);
    const webhook = await tenant.admin.post("/admin/notification-channels", {
      type: "webhook",
      url: `${receiver.url}/confirm-flow`,
    });
    expect(webhook.body.channel.status).toBe("active");

    const [mail] = await mailsTo(address, 1);
    expect(mail!.from).toBe("alerts@leadgate.example");
    const link = confirmationLink(mail!);
    expect(`${link.origin}${link.pathname}`).toBe(`${PUBLIC_BASE_URL}${CONFIRM_PATH}`);
    const token = link.searchParams.get("token")!;
    expect(token.length).toBeGreaterThanOrEqual(40);
    // Stored hashed: the row holds neither the token nor its secret part in clear.
    const row = JSON.stringify(
      (await app.sql.query("SELECT * FROM notification_channels WHERE id = $1", [channel.id])).rows,
    );
    expect(row).not.toContain(token.split(".").pop()!);
    expect(row).toContain(createHash("sha256").update(token).digest("hex"));

    // While pending, an alert reaches the active webhook channel but not the address.
    await raise(tenant.tenantId, "http_400");
    await waitFor(
      () => Promise.resolve(receiver.received.filter((r) => r.path === "/confirm-flow").length),
      (n) => n === 1,
    );
    await app.settled();
    expect(alertMails(address)).toEqual([]);
    // Not even a notification job is made for the pending channel (nor its memory of what it was told).
    const pendingJobs = await app.sql.query("SELECT 1 FROM jobs WHERE job_key LIKE $1", [
      `%.${channel.id}.%`,
    ]);
    expect(pendingJobs.rowCount).toBe(0);

    // Opening the link (as a mail scanner would) shows a page and confirms nothing.
    const page = await fetch(local(link));
    expect([page.status, page.headers.get("content-type")]).toEqual([
      200,
      expect.stringContaining("text/html"),
    ]);
    const html = await page.text();
    expect(html).toMatch(/<form method="post" action="[^"]*\?token=[^"]+"/);
    expect(html).toContain("<button");
    expect(await statusOf(channel.id)).toBe("pending_confirmation");
    // The form posts back to the same URL.
    const action = /action="([^"]+)"/.exec(html)![1]!.replace(/&amp;/g, "&");
    expect(new URL(action, local(link)).toString()).toBe(new URL(local(link)).toString());

    const confirmed = await pressButton(local(link));
    expect([confirmed.status, confirmed.headers.get("content-type")]).toEqual([
      200,
      expect.stringContaining("text/html"),
    ]);
    expect(await confirmed.text()).toContain("confirmed");
    expect(await statusOf(channel.id)).toBe("active");
    const after = await tenant.admin.get("/admin/notification-channels");
    expect(after.body.items.find((c: { id: string }) => c.id === channel.id).status).toBe("active");

    // Single use: the same link again is refused.
    const again = await pressButton(local(link));
    expect(again.status).toBe(400);
    expect(await again.json()).toEqual({ error: "invalid_token", message: expect.any(String) });

    // Confirmed: the next alert reaches the address.
    await raise(tenant.tenantId, "http_422");
    await waitFor(
      () => Promise.resolve(alertMails(address).length),
      (n) => n === 1,
    );
    expect(alertMails(address)[0]!.text).toContain("job.dead");
  });

  it("resend-confirmation: 202 and a new link; the old link stops working; at most 3 an hour (429 + Retry-After)", async () => {
    const tenant = await createTenant(app.url);
    const address = "resend@agency.example";
    const channel = await emailChannel(tenant, address);
    const [first] = await mailsTo(address, 1);
    const resent = await tenant.admin.post(`/admin/notification-channels/${channel.id}/resend-confirmation`);
    expect(resent.status).toBe(202);
    const mails = await mailsTo(address, 2);
    const [oldLink, newLink] = [confirmationLink(first!), confirmationLink(mails[1]!)];
    expect(newLink.searchParams.get("token")).not.toBe(oldLink.searchParams.get("token"));

    const old = await pressButton(local(oldLink));
    expect([old.status, ((await old.json()) as { error: string }).error]).toEqual([400, "invalid_token"]);
    expect((await fetch(local(oldLink))).status).toBe(400);
    expect(await statusOf(channel.id)).toBe("pending_confirmation");

    for (let i = 0; i < 2; i++) {
      expect(
        (await tenant.admin.post(`/admin/notification-channels/${channel.id}/resend-confirmation`)).status,
      ).toBe(202);
    }
    await mailsTo(address, 4);
    const refused = await tenant.admin.post(`/admin/notification-channels/${channel.id}/resend-confirmation`);
    expect([refused.status, refused.body.error]).toEqual([429, "rate_limited"]);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(60);
    expect(retryAfter).toBeLessThanOrEqual(3600);

    // The newest link confirms; then a resend is refused: nothing is pending.
    const newest = confirmationLink(smtp.to(address)[3]!);
    expect((await pressButton(local(newest))).status).toBe(200);
    const done = await tenant.admin.post(`/admin/notification-channels/${channel.id}/resend-confirmation`);
    expect([done.status, done.body.error]).toEqual([409, "channel_not_pending"]);
    // No mail for the refused calls: the test notification sent after them is the next one.
    await marker(tenant, channel.id);
    expect(subjectsTo(address)).toEqual([...Array<string>(4).fill(CONFIRMATION), TEST]);
  });

  it("resend-confirmation of a webhook channel is 409 channel_not_pending; another tenant's channel is 404", async () => {
    const tenant = await createTenant(app.url);
    const webhook = await tenant.admin.post("/admin/notification-channels", {
      type: "webhook",
      url: `${receiver.url}/not-pending`,
    });
    const answer = await tenant.admin.post(
      `/admin/notification-channels/${webhook.body.channel.id}/resend-confirmation`,
    );
    expect([answer.status, answer.body.error]).toEqual([409, "channel_not_pending"]);
    const other = await createTenant(app.url);
    const email = await emailChannel(other, "other@agency.example");
    const foreign = await tenant.admin.post(`/admin/notification-channels/${email.id}/resend-confirmation`);
    expect([foreign.status, foreign.body.error]).toEqual([404, "not_found"]);
  });

  it("the test route answers 409 channel_pending while an email channel is unconfirmed, and sends nothing", async () => {
    const tenant = await createTenant(app.url);
    const address = "pending-test@agency.example";
    const channel = await emailChannel(tenant, address);
    await mailsTo(address, 1);
    const answer = await tenant.admin.post(`/admin/notification-channels/${channel.id}/test`);
    expect([answer.status, answer.body.error]).toEqual([409, "channel_pending"]);
    // Confirmed, the channel's test notification is the next mail: the refused test sent none.
    const [mail] = smtp.to(address);
    expect((await pressButton(local(confirmationLink(mail!)))).status).toBe(200);
    await marker(tenant, channel.id);
    expect(subjectsTo(address)).toEqual([CONFIRMATION, TEST]);
  });

  it("an unknown, malformed or expired (7 days) token is 400 invalid_token on GET and POST, and confirms nothing; no API key is needed", async () => {
    const tenant = await createTenant(app.url);
    const address = "expired@agency.example";
    const channel = await emailChannel(tenant, address);
    const [mail] = await mailsTo(address, 1);
    const link = confirmationLink(mail!);
    const token = link.searchParams.get("token")!;
    const expiresAt = await app.sql.query<{ days: number }>(
      `SELECT round(extract(epoch FROM confirmation_expires_at - created_at) / 86400)::int AS days
       FROM notification_channels WHERE id = $1`,
      [channel.id],
    );
    expect(expiresAt.rows[0]!.days).toBe(7);

    const forged = `${token.slice(0, -4)}AAAA`;
    for (const query of [
      `?token=${encodeURIComponent(forged)}`,
      "?token=00000000-0000-4000-8000-000000000000.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
      "?token=not-a-token",
      "?token=",
      "",
    ]) {
      for (const answer of [
        await fetch(`${app.url}${CONFIRM_PATH}${query}`),
        await pressButton(`${app.url}${CONFIRM_PATH}${query}`),
      ]) {
        expect([query, answer.status, ((await answer.json()) as { error: string }).error]).toEqual([
          query,
          400,
          "invalid_token",
        ]);
      }
    }
    expect(await statusOf(channel.id)).toBe("pending_confirmation");

    await app.sql.query(
      "UPDATE notification_channels SET confirmation_expires_at = now() - interval '1 second' WHERE id = $1",
      [channel.id],
    );
    for (const answer of [await fetch(local(link)), await pressButton(local(link))]) {
      expect([answer.status, ((await answer.json()) as { error: string }).error]).toEqual([
        400,
        "invalid_token",
      ]);
    }
    expect(await statusOf(channel.id)).toBe("pending_confirmation");
  });

  it("email channels made before confirmation existed stay active (the migration's default)", async () => {
    const tenant = await createTenant(app.url);
    const { rows } = await app.sql.query<{ id: string; status: string }>(
      `INSERT INTO notification_channels (tenant_id, type, address) VALUES ($1, 'email', 'legacy@agency.example')
       RETURNING id, status`,
      [tenant.tenantId],
    );
    expect(rows[0]!.status).toBe("active");
    const listed = await tenant.admin.get("/admin/notification-channels");
    expect(listed.body.items).toEqual([expect.objectContaining({ id: rows[0]!.id, status: "active" })]);
    await raise(tenant.tenantId, "http_409");
    await waitFor(
      () => Promise.resolve(alertMails("legacy@agency.example").length),
      (n) => n === 1,
    );
  });
});

describe("email channel confirmation: failed tokens and the pre-auth budget", () => {
  const smtp = useSmtpServer();
  const app = useApp({
    env: () => ({
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      PUBLIC_BASE_URL,
      SMTP_URL: smtp.url,
      ALERT_EMAIL_FROM: "alerts@leadgate.example",
      PREAUTH_FAILURE_LIMIT: "4",
    }),
  });

  it("failed tokens count against PREAUTH_FAILURE_LIMIT (429 rate_limited beyond it); a valid token still confirms", async () => {
    const tenant = await createTenant(app.url);
    const created = await tenant.admin.post("/admin/notification-channels", {
      type: "email",
      address: "budget@agency.example",
    });
    expect(created.status).toBe(201);
    const [mail] = await waitFor(
      () => Promise.resolve(smtp.to("budget@agency.example")),
      (mails) => mails.length === 1,
    );
    const link = confirmationLink(mail!);
    const bad = `${app.url}${CONFIRM_PATH}?token=${created.body.channel.id}.${"B".repeat(43)}`;
    for (let i = 0; i < 4; i++) expect((await fetch(bad)).status).toBe(400);
    const over = await fetch(bad, { method: "POST" });
    expect(over.status).toBe(429);
    expect(((await over.json()) as { error: string }).error).toBe("rate_limited");
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect((await fetch(`${app.url}${CONFIRM_PATH}?token=garbage`)).status).toBe(429);

    const confirmed = await fetch(`${app.url}${link.pathname}${link.search}`, { method: "POST" });
    expect(confirmed.status).toBe(200);
    const { rows } = await app.sql.query("SELECT status FROM notification_channels WHERE id = $1", [
      created.body.channel.id,
    ]);
    expect(rows).toEqual([{ status: "active" }]);
  });
});
