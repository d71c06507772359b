import { randomUUID } from "node:crypto";
// Side effects end to end: deliveries over HTTP to the real API, the real worker (BullMQ on the
// real Redis), and provider APIs and CRMs as real HTTP servers on loopback.
import { Webhook } from "standardwebhooks";
import type { ReceivedRequest } from "../support/fake-server.js";
import { OPERATOR_KEY } from "../support/admin.js";
import { fixture } from "../support/fixtures.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import type { TestConnection } from "../support/tenants.js";
import { waitFor } from "../support/wait.js";
import { LeadsRepository } from "../../src/leads/leads.repository.js";

const YELP_TOKEN = "yelp-platform-token-0123456789";
const REPLY = "Thanks for reaching out! We will call you within the hour.";

describe("side effects", () => {
  /** Yelp events per lead id served by the fake Yelp API. */
  const yelpEvents = new Map<string, unknown[]>();
  /** Thumbtack messages per negotiation served by the fake Thumbtack API. */
  const thumbtackMessages = new Map<string, unknown[]>();
  /** Lead ids whose Yelp API answers fail (500) until removed. */
  const yelpFailing = new Set<string>();
  /** Lead ids the Yelp API answers 404 for (a permanent failure) until removed. */
  const yelpGone = new Set<string>();
  const yelp = useFakeServer({ status: 201, body: {} }, (request) => {
    const match = /^\/v3\/leads\/([^/?]+)(\/events)?/.exec(request.path);
    if (!match || request.method !== "GET") return undefined;
    if (yelpFailing.has(match[1]!)) return { status: 500, body: {} };
    if (yelpGone.has(match[1]!)) return { status: 404, body: {} };
    if (match[2]) return { status: 200, body: { events: yelpEvents.get(match[1]!) ?? [] } };
    return { status: 200, body: { ...fixture("yelp/api-get-lead.json").json, id: match[1] } };
  });
  const thumbtack = useFakeServer({ status: 201, body: {} }, (request) => {
    const match = /^\/api\/v4\/negotiations\/([^/]+)\/messages/.exec(request.path);
    if (!match || request.method !== "GET") return undefined;
    return { status: 200, body: { messages: thumbtackMessages.get(match[1]!) ?? [] } };
  });
  const crm = useFakeServer({ status: 200, body: {} });
  const app = useApp({
    worker: true,
    env: () => ({
      YELP_WEBHOOK_TOKEN: YELP_TOKEN,
      YELP_API_BASE_URL: yelp.url,
      THUMBTACK_API_BASE_URL: thumbtack.url,
      JOB_BACKOFF_BASE_MS: "50",
      SIDE_EFFECT_TIMEOUT_MS: "5000",
      DISPATCHER_INTERVAL_MS: "300",
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
    }),
  });

  const connect = (provider: "staticforms" | "thumbtack" | "yelp", crmPath: string, extra: object = {}) =>
    app.createConnection({
      provider,
      inboundAuth: { type: provider === "yelp" ? "none" : provider === "thumbtack" ? "basic" : "bearer" },
      credentials: { accessToken: `token-${crmPath}` },
      settings: {
        autoResponse: { enabled: true, text: REPLY },
        crmDestination: { url: `${crm.url}/crm/${crmPath}` },
      },
      ...extra,
    });
  const basic = (c: TestConnection) => ({
    authorization: `Basic ${Buffer.from(`${c.secrets.username}:${c.secrets.password}`).toString("base64")}`,
  });
  const jobsOf = (tenantId: string) =>
    app.sql
      .query<{ operation: string; status: string; attempts: number; job_key: string; id: string }>(
        "SELECT id, operation, status, attempts, job_key FROM jobs WHERE tenant_id = $1 ORDER BY operation, created_at",
        [tenantId],
      )
      .then((result) => result.rows);
  const settled = (jobs: { status: string }[]) =>
    jobs.length > 0 && jobs.every((job) => ["succeeded", "dead", "blocked"].includes(job.status));
  const crmCalls = (path: string) => crm.received.filter((request) => request.path === `/crm/${path}`);
  const verifies = (request: ReceivedRequest, secret: string) =>
    new Webhook(secret).verify(request.body, request.headers as Record<string, string>);

  it("Static Forms: one lead row and one signed CRM delivery", async () => {
    const c = await connect("staticforms", "sf");
    const answer = await post(
      `${app.url}/webhooks/staticforms/${c.connectionId}`,
      fixture("staticforms/form-submitted.json").text,
      { authorization: `Bearer ${c.secrets.bearerToken}` },
    );
    expect(answer.status).toBe(202);
    const jobs = await waitFor(() => jobsOf(c.tenantId), settled);
    expect(jobs.map((job) => [job.operation, job.status])).toEqual([
      ["crm-delivery", "succeeded"],
      ["lead-upsert", "succeeded"],
    ]);
    const leads = await app.sql.query(
      "SELECT name, email, phone, status, details FROM leads WHERE tenant_id = $1",
      [c.tenantId],
    );
    expect(leads.rows).toEqual([
      {
        name: "Lena Vasquez",
        email: "lena.v@example.test",
        phone: "+1 512 555 0142",
        status: "open",
        details: { form: { subject: "Quote request" } },
      },
    ]);
    const calls = crmCalls("sf");
    expect(calls).toHaveLength(1);
    expect(calls[0]!.headers["webhook-id"]).toBe(jobs[0]!.job_key);
    expect(verifies(calls[0]!, c.secrets.crmSigningSecret!)).toMatchObject({
      type: "lead.created",
      data: {
        provider: "staticforms",
        leadId: "sub_9f3k2m7q1x",
        payload: { formData: { name: "Lena Vasquez" } },
      },
    });
    expect(() => verifies(calls[0]!, `whsec_${Buffer.alloc(32, 1).toString("base64")}`)).toThrow();
  });

  it("Thumbtack: the negotiation and two customer messages make one lead, one auto-reply, three CRM deliveries", async () => {
    const c = await connect("thumbtack", "tt", { externalAccountId: "700000000000000404" });
    const url = `${app.url}/webhooks/thumbtack/${c.connectionId}`;
    const message = fixture("thumbtack/message-created-v4-customer.json").json as { data: object };
    expect((await post(url, fixture("thumbtack/negotiation-created-v4.json").text, basic(c))).status).toBe(
      202,
    );
    expect((await post(url, message, basic(c))).status).toBe(202);
    const second = {
      ...message,
      data: { ...message.data, messageID: "700000000000000717", text: "Also, a gate." },
    };
    expect((await post(url, second, basic(c))).status).toBe(202);

    const jobs = await waitFor(
      () => jobsOf(c.tenantId),
      (rows) => rows.length === 7 && settled(rows),
    );
    expect(jobs.filter((job) => job.status !== "succeeded")).toEqual([]);
    const replies = thumbtack.received.filter((request) => request.method === "POST");
    expect(replies).toHaveLength(1);
    expect(replies[0]!.path).toBe("/api/v4/negotiations/700000000000000202/messages");
    expect(replies[0]!.headers.authorization).toBe("Bearer token-tt");
    expect(JSON.parse(replies[0]!.body)).toEqual({ text: REPLY });
    const leads = await app.sql.query("SELECT id, name, phone, status FROM leads WHERE tenant_id = $1", [
      c.tenantId,
    ]);
    expect(leads.rows).toMatchObject([{ name: "Priya Okafor", phone: "2065550117", status: "open" }]);
    const messages = await app.sql.query(
      "SELECT external_id, direction FROM lead_messages WHERE lead_id = $1 ORDER BY external_id",
      [leads.rows[0].id],
    );
    expect(messages.rows).toEqual([
      { external_id: "700000000000000707", direction: "inbound" },
      { external_id: "700000000000000717", direction: "inbound" },
    ]);
    const calls = crmCalls("tt");
    expect(calls).toHaveLength(3);
    for (const call of calls) expect(verifies(call, c.secrets.crmSigningSecret!)).toBeTruthy();
  });

  it("Thumbtack: a message before its negotiation makes a placeholder lead, filled when the negotiation comes", async () => {
    const c = await connect("thumbtack", "tt-early", { externalAccountId: "700000000000000777" });
    const url = `${app.url}/webhooks/thumbtack/${c.connectionId}`;
    const message = fixture("thumbtack/message-created-v4-customer.json").json as { data: object };
    await post(
      url,
      { ...message, data: { ...message.data, negotiationID: "early-1", messageID: "early-msg" } },
      basic(c),
    );
    await waitFor(() => jobsOf(c.tenantId), settled);
    const placeholder = await app.sql.query("SELECT status, name FROM leads WHERE tenant_id = $1", [
      c.tenantId,
    ]);
    expect(placeholder.rows).toEqual([{ status: "placeholder", name: null }]);

    const negotiation = fixture("thumbtack/negotiation-created-v4.json").json as { data: object };
    await post(url, { ...negotiation, data: { ...negotiation.data, negotiationID: "early-1" } }, basic(c));
    await waitFor(
      () => jobsOf(c.tenantId),
      (rows) => rows.filter((row) => row.operation === "lead-upsert").length === 2 && settled(rows),
    );
    const filled = await app.sql.query("SELECT status, name FROM leads WHERE tenant_id = $1", [c.tenantId]);
    expect(filled.rows).toEqual([{ status: "open", name: "Priya Okafor" }]);
    // The message went out with the placeholder lead; the negotiation, which completed it, is lead.created.
    const delivered = await waitFor(
      () =>
        Promise.resolve(
          crmCalls("tt-early").map(
            (call) => JSON.parse(call.body) as { type: string; data: { lead: { status: string } } },
          ),
        ),
      (bodies) => bodies.length === 2,
    );
    expect(delivered.map((body) => [body.type, body.data.lead.status])).toEqual([
      ["lead.replied", "placeholder"],
      ["lead.created", "open"],
    ]);
  });

  it("an older event never overwrites newer data", async () => {
    const leads = app.worker.get(LeadsRepository);
    const c = await connect("staticforms", "order");
    const key = {
      tenantId: c.tenantId,
      connectionId: c.connectionId,
      provider: "staticforms" as const,
      externalLeadId: "ordered",
    };
    const receiptId = randomUUID(); // the receipt whose event this is (no CRM delivery here)
    await leads.upsertContact(
      key,
      receiptId,
      { contact: { name: "New Name", phone: "2" }, details: { v: 2 } },
      new Date("2026-05-02T00:00:00Z"),
    );
    await leads.upsertContact(
      key,
      receiptId,
      { contact: { name: "Old Name", phone: "1" }, details: { v: 1 } },
      new Date("2026-05-01T00:00:00Z"),
    );
    const { rows } = await app.sql.query(
      "SELECT name, phone, details, last_event_at FROM leads WHERE tenant_id = $1",
      [c.tenantId],
    );
    expect(rows).toEqual([
      { name: "New Name", phone: "2", details: { v: 2 }, last_event_at: new Date("2026-05-02T00:00:00Z") },
    ]);
    await leads.upsertContact(
      key,
      receiptId,
      { contact: { name: "Newest" }, details: { v: 3 } },
      new Date("2026-05-03T00:00:00Z"),
    );
    const after = await app.sql.query("SELECT name, phone, details FROM leads WHERE tenant_id = $1", [
      c.tenantId,
    ]);
    expect(after.rows).toEqual([{ name: "Newest", phone: "2", details: { v: 3 } }]);
  });

  it("Yelp: the lead is fetched, our reply sent once, the CRM told", async () => {
    const c = await connect("yelp", "yelp", { externalAccountId: "tEstBiz_Kx9Lm2Qp7Rs4Vw" });
    yelpEvents.set(
      "lEad7Pq2Wx9Mn4Bv6Ct8Dd",
      (fixture("yelp/api-lead-events.json").json as { events: unknown[] }).events,
    );
    expect(
      (await post(`${app.url}/webhooks/yelp/${YELP_TOKEN}`, fixture("yelp/new-event.json").text)).status,
    ).toBe(202);
    const jobs = await waitFor(
      () => jobsOf(c.tenantId),
      (rows) => rows.length === 3 && settled(rows),
    );
    expect(jobs.map((job) => job.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
    const lead = await app.sql.query("SELECT id, name, email FROM leads WHERE tenant_id = $1", [c.tenantId]);
    expect(lead.rows).toMatchObject([{ name: "Marta K.", email: "m.k.4f2a9c@messaging.yelp.example.test" }]);
    const messages = await app.sql.query("SELECT external_id, text FROM lead_messages WHERE lead_id = $1", [
      lead.rows[0].id,
    ]);
    expect(messages.rows).toEqual([
      {
        external_id: "evT0kQ3nR8sLw2Zy5Hc1Aa",
        text: "Hi, my water heater is leaking. Can someone come Friday?",
      },
    ]);
    const replies = yelp.received.filter((request) => request.method === "POST");
    expect(replies.map((request) => [request.path, JSON.parse(request.body) as unknown])).toEqual([
      ["/v3/leads/lEad7Pq2Wx9Mn4Bv6Ct8Dd/events", { request_type: "TEXT", request_content: REPLY }],
    ]);
    const calls = crmCalls("yelp");
    expect(calls).toHaveLength(1);
    // A new lead: the CRM hears of it once complete, with what the Yelp API said about it.
    const delivered = JSON.parse(calls[0]!.body);
    expect(delivered.type).toBe("lead.created");
    expect(delivered.data.lead).toMatchObject({
      id: lead.rows[0].id,
      name: "Marta K.",
      email: "m.k.4f2a9c@messaging.yelp.example.test",
      phoneConsent: null,
      status: "open",
      messages: [
        {
          direction: "inbound",
          author: "Marta K.",
          text: "Hi, my water heater is leaking. Can someone come Friday?",
          sentAt: expect.stringMatching(/^2026-03-14T16:05:39/),
        },
      ],
    });
  });

  it("Yelp: a dead lead-upsert leaves its CRM delivery waiting, visibly; replaying the upsert releases it", async () => {
    const c = await connect("yelp", "yelp-dead", { externalAccountId: "deadBiz_00000000000001" });
    yelpGone.add("deadLead1");
    const delivery = {
      time: "2026-03-14T16:05:42+00:00",
      object: "business",
      data: {
        id: "deadBiz_00000000000001",
        updates: [{ event_type: "NEW_EVENT", event_id: "deadEv1", lead_id: "deadLead1" }],
      },
    };
    expect((await post(`${app.url}/webhooks/yelp/${YELP_TOKEN}`, delivery)).status).toBe(202);
    const jobs = await waitFor(
      () => jobsOf(c.tenantId),
      (rows) => rows.find((job) => job.operation === "lead-upsert")?.status === "dead",
    );
    const crmJob = jobs.find((job) => job.operation === "crm-delivery")!;
    const view = await app.operator.get(`/admin/jobs/${crmJob.id}`);
    expect([view.body.status, view.body.waitingFor]).toEqual(["waiting", "dependency"]);
    expect(crmCalls("yelp-dead")).toEqual([]);

    yelpGone.delete("deadLead1");
    const upsert = jobs.find((job) => job.operation === "lead-upsert")!;
    expect((await app.operator.post(`/admin/jobs/${upsert.id}/replay`)).status).toBe(202);
    const calls = await waitFor(
      () => Promise.resolve(crmCalls("yelp-dead")),
      (list) => list.length === 1,
    );
    const body = JSON.parse(calls[0]!.body);
    expect([body.type, body.data.lead.name]).toEqual(["lead.created", "Marta K."]);
  });

  it("Yelp: the CRM delivery waits for the lead-upsert (visibly), then carries the fetched lead; a later event is lead.updated", async () => {
    const c = await connect("yelp", "yelp-wait", { externalAccountId: "waitBiz_00000000000001" });
    yelpFailing.add("waitLead1");
    const event = (eventId: string) => ({
      time: "2026-03-14T16:05:42+00:00",
      object: "business",
      data: {
        id: "waitBiz_00000000000001",
        updates: [{ event_type: "NEW_EVENT", event_id: eventId, lead_id: "waitLead1" }],
      },
    });
    expect((await post(`${app.url}/webhooks/yelp/${YELP_TOKEN}`, event("waitEv1"))).status).toBe(202);
    const waiting = await waitFor(
      () =>
        app.sql
          .query<{ operation: string; status: string; waiting_for: string | null }>(
            `SELECT operation, status, waiting_for FROM jobs WHERE tenant_id = $1 AND operation <> 'initial-response'
             ORDER BY operation`,
            [c.tenantId],
          )
          .then((result) => result.rows),
      (rows) => rows[1]?.status === "retrying",
    );
    expect(waiting).toEqual([
      { operation: "crm-delivery", status: "waiting", waiting_for: "dependency" },
      { operation: "lead-upsert", status: "retrying", waiting_for: null },
    ]);
    expect(crmCalls("yelp-wait")).toEqual([]);

    yelpFailing.delete("waitLead1");
    await waitFor(
      () => Promise.resolve(crmCalls("yelp-wait")),
      (calls) => calls.length === 1,
    );
    const first = JSON.parse(crmCalls("yelp-wait")[0]!.body);
    expect(first.type).toBe("lead.created");
    expect(first.data.lead.name).toBe("Marta K.");

    // The same lead's next event: the lead existed before it, so it keeps its kind.
    expect((await post(`${app.url}/webhooks/yelp/${YELP_TOKEN}`, event("waitEv2"))).status).toBe(202);
    await waitFor(
      () => Promise.resolve(crmCalls("yelp-wait")),
      (calls) => calls.length === 2,
    );
    expect(JSON.parse(crmCalls("yelp-wait")[1]!.body).type).toBe("lead.updated");
  });

  it("Yelp: no auto-reply when the business already wrote (here our own API-SELF message)", async () => {
    const c = await connect("yelp", "yelp-self", { externalAccountId: "selfBiz_0000000000000001" });
    // As recorded: our reply listed before the consumer's message, although created after it.
    const events = (fixture("yelp/api-lead-events-with-our-reply.json").json as { events: unknown[] }).events;
    yelpEvents.set("selfLead", events);
    const before = yelp.received.filter((request) => request.method === "POST").length;
    const body = {
      time: "2026-03-14T16:06:12+00:00",
      object: "business",
      data: {
        id: "selfBiz_0000000000000001",
        updates: [{ event_type: "NEW_EVENT", event_id: "evB1zX7cV3bN5mQ8wE2rTy", lead_id: "selfLead" }],
      },
    };
    expect((await post(`${app.url}/webhooks/yelp/${YELP_TOKEN}`, body)).status).toBe(202);
    await waitFor(
      () => jobsOf(c.tenantId),
      (rows) => rows.length === 3 && settled(rows),
    );
    expect(yelp.received.filter((request) => request.method === "POST")).toHaveLength(before);
    const record = await app.sql.query(
      "SELECT status, external_ref FROM side_effects WHERE tenant_id = $1 AND operation = 'initial-response'",
      [c.tenantId],
    );
    expect(record.rows).toEqual([{ status: "skipped", external_ref: "business_already_replied" }]);
  });
  it("Thumbtack: no auto-reply when the business (or Thumbtack's quick reply) already wrote on the negotiation", async () => {
    const c = await connect("thumbtack", "tt-pro", { externalAccountId: "700000000000000888" });
    thumbtackMessages.set("700000000000000889", [
      {
        messageID: "700000000000000890",
        from: "Business",
        text: "Hi! I can come by tomorrow.",
        sentAt: "2026-04-02T15:20:05Z",
      },
    ]);
    const negotiation = fixture("thumbtack/negotiation-created-v4.json").json as { data: object };
    const body = { ...negotiation, data: { ...negotiation.data, negotiationID: "700000000000000889" } };
    expect((await post(`${app.url}/webhooks/thumbtack/${c.connectionId}`, body, basic(c))).status).toBe(202);
    await waitFor(
      () => jobsOf(c.tenantId),
      (rows) => rows.length === 3 && settled(rows),
    );
    const replies = thumbtack.received.filter(
      (request) =>
        request.method === "POST" && request.path === "/api/v4/negotiations/700000000000000889/messages",
    );
    expect(replies).toEqual([]);
    const record = await app.sql.query(
      "SELECT status, external_ref FROM side_effects WHERE tenant_id = $1 AND operation = 'initial-response'",
      [c.tenantId],
    );
    expect(record.rows).toEqual([{ status: "skipped", external_ref: "business_already_replied" }]);
  });
  it("Thumbtack in credential_error: its leads still reach the CRM; only the reply, which needs the token, is blocked", async () => {
    const c = await connect("thumbtack", "tt-cred", { externalAccountId: "700000000000000999" });
    await app.sql.query("UPDATE connections SET status = 'credential_error' WHERE id = $1", [c.connectionId]);
    const negotiation = fixture("thumbtack/negotiation-created-v4.json").json as { data: object };
    const body = { ...negotiation, data: { ...negotiation.data, negotiationID: "700000000000000998" } };
    expect((await post(`${app.url}/webhooks/thumbtack/${c.connectionId}`, body, basic(c))).status).toBe(202);
    const jobs = await waitFor(
      () => jobsOf(c.tenantId),
      (rows) => rows.length === 3 && settled(rows),
    );
    expect(jobs.map((job) => [job.operation, job.status])).toEqual([
      ["crm-delivery", "succeeded"],
      ["initial-response", "blocked"],
      ["lead-upsert", "succeeded"],
    ]);
    expect(crmCalls("tt-cred")).toHaveLength(1);
    expect(thumbtack.received.filter((request) => request.path.includes("700000000000000998"))).toEqual([]);
  });
});
