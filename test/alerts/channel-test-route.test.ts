// POST /admin/notification-channels/{id}/test is no open relay. It sends one test
// notification and answers with its outcome (`200 { delivered, status?, error? }`, waiting at most
// SIDE_EFFECT_TIMEOUT_MS), at most 5 a minute per channel (then 429 rate_limited + Retry-After).
// Real receivers: a webhook receiver over HTTP, a real SMTP server, a TCP server that never greets.
import { createServer, type Server, type Socket } from "node:net";
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { confirmationLink, useSmtpServer } from "../support/smtp.js";
import { waitFor } from "../support/wait.js";

const TIMEOUT_MS = 2_000;

describe("POST /admin/notification-channels/{id}/test", () => {
  const smtp = useSmtpServer();
  const receiver = useFakeServer({ status: 204 }, (request) => {
    if (request.path === "/failing") return { status: 500 };
    if (request.path === "/slow") return { status: 204, delayMs: TIMEOUT_MS * 3 };
    return undefined;
  });
  const app = useApp({
    env: () => ({
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      SMTP_URL: smtp.url,
      ALERT_EMAIL_FROM: "alerts@leadgate.example",
      SIDE_EFFECT_TIMEOUT_MS: String(TIMEOUT_MS),
    }),
  });
  const at = (path: string) => receiver.received.filter((request) => request.path === path);
  const webhook = async (tenant: Awaited<ReturnType<typeof createTenant>>, path: string) => {
    const created = await tenant.admin.post("/admin/notification-channels", {
      type: "webhook",
      url: `${receiver.url}${path}`,
    });
    expect(created.status).toBe(201);
    return created.body.channel.id as string;
  };
  const confirmedEmail = async (tenant: Awaited<ReturnType<typeof createTenant>>, address: string) => {
    const created = await tenant.admin.post("/admin/notification-channels", { type: "email", address });
    expect(created.status).toBe(201);
    const [mail] = await waitFor(
      () => Promise.resolve(smtp.to(address)),
      (mails) => mails.length === 1,
    );
    const link = confirmationLink(mail!);
    expect((await fetch(`${app.url}${link.pathname}${link.search}`, { method: "POST" })).status).toBe(200);
    return created.body.channel.id as string;
  };

  it("answers 200 { delivered: true } once the receiver took the test notification", async () => {
    const tenant = await createTenant(app.url);
    const id = await webhook(tenant, "/ok");
    const answer = await tenant.admin.post(`/admin/notification-channels/${id}/test`);
    expect([answer.status, answer.body]).toEqual([200, { delivered: true }]);
    // Answered after the send, not before: it is there already.
    expect(at("/ok")).toHaveLength(1);
    expect(JSON.parse(at("/ok")[0]!.body)).toMatchObject({ type: "alert.test" });
  });

  it("answers 200 { delivered: false, status, error } when the receiver refuses, and { error: timeout } within the send timeout", async () => {
    const tenant = await createTenant(app.url);
    const failing = await tenant.admin.post(
      `/admin/notification-channels/${await webhook(tenant, "/failing")}/test`,
    );
    expect([failing.status, failing.body]).toEqual([
      200,
      { delivered: false, status: 500, error: "http_500" },
    ]);

    const slowChannel = await webhook(tenant, "/slow");
    const started = Date.now();
    const slow = await tenant.admin.post(`/admin/notification-channels/${slowChannel}/test`);
    expect([slow.status, slow.body]).toEqual([200, { delivered: false, error: "timeout" }]);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 1_500);
  });

  it("email: delivered through SMTP; a refused recipient is { delivered: false, status: 550 }; an SMTP server that never answers times out", async () => {
    const tenant = await createTenant(app.url);
    const address = "test-route@agency.example";
    const id = await confirmedEmail(tenant, address);
    const sent = await tenant.admin.post(`/admin/notification-channels/${id}/test`);
    expect([sent.status, sent.body]).toEqual([200, { delivered: true }]);
    expect(smtp.to(address).map((mail) => /Subject: (.*)/.exec(mail.text)?.[1])).toEqual([
      expect.stringContaining("Confirm"),
      "Leadgate test notification",
    ]);

    const refusedAddress = "refused@agency.example";
    const refusedId = await confirmedEmail(tenant, refusedAddress);
    smtp.refused.add(refusedAddress);
    const refused = await tenant.admin.post(`/admin/notification-channels/${refusedId}/test`);
    expect([refused.status, refused.body]).toEqual([
      200,
      { delivered: false, status: 550, error: "smtp_550" },
    ]);
  });

  it("at most 5 a minute per channel: the 6th is 429 rate_limited with Retry-After and sends nothing; other channels are not affected", async () => {
    const tenant = await createTenant(app.url);
    const id = await webhook(tenant, "/limited");
    for (let i = 0; i < 5; i++) {
      expect((await tenant.admin.post(`/admin/notification-channels/${id}/test`)).body).toEqual({
        delivered: true,
      });
    }
    const refused = await tenant.admin.post(`/admin/notification-channels/${id}/test`);
    expect([refused.status, refused.body]).toEqual([
      429,
      { error: "rate_limited", message: expect.any(String) },
    ]);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(at("/limited")).toHaveLength(5);
    // The operator's calls count against the same channel.
    expect((await app.operator.post(`/admin/notification-channels/${id}/test`)).status).toBe(429);
    const other = await webhook(tenant, "/not-limited");
    expect((await tenant.admin.post(`/admin/notification-channels/${other}/test`)).body).toEqual({
      delivered: true,
    });
  });
});

describe("POST /admin/notification-channels/{id}/test: an SMTP server that never answers", () => {
  const sockets = new Set<Socket>();
  let silent: Server | undefined;
  let port = 0;
  beforeAll(async () => {
    // Accepts connections and never sends the SMTP greeting.
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent!.listen(0, "127.0.0.1", resolve));
    port = (silent.address() as { port: number }).port;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => (silent ? silent.close(() => resolve()) : resolve()));
  });
  const app = useApp({
    env: () => ({
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      SMTP_URL: `smtp://127.0.0.1:${port}`,
      ALERT_EMAIL_FROM: "alerts@leadgate.example",
      SIDE_EFFECT_TIMEOUT_MS: String(TIMEOUT_MS),
    }),
  });

  it("answers { delivered: false, error: timeout } after SIDE_EFFECT_TIMEOUT_MS", async () => {
    const tenant = await createTenant(app.url);
    const created = await tenant.admin.post("/admin/notification-channels", {
      type: "email",
      address: "silent@agency.example",
    });
    expect(created.status).toBe(201);
    const id = created.body.channel.id as string;
    // Confirmed by hand: this SMTP server delivers no confirmation mail.
    await app.sql.query("UPDATE notification_channels SET status = 'active' WHERE id = $1", [id]);
    const started = Date.now();
    const answer = await tenant.admin.post(`/admin/notification-channels/${id}/test`);
    expect([answer.status, answer.body]).toEqual([200, { delivered: false, error: "timeout" }]);
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS + 1_500);
  });
});
