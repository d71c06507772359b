// Speed to lead per lead (api.md "First replies: templates, business hours, speed to lead"): webhooks
// over HTTP to the real API and worker, Yelp's and Thumbtack's APIs as real HTTP servers on loopback.
// A lead's firstResponse is Leadgate's auto-reply or the business's own message, whichever came
// first; it never moves later; the business clock counts only open hours.
import { randomUUID } from "node:crypto";
import { Transactions } from "../../src/database/transactions.js";
import { countResponse, FirstResponses } from "../../src/leads/first-responses.js";
import { Metrics } from "../../src/observability/metrics.js";
import { OPERATOR_KEY } from "../support/admin.js";
import { fixture } from "../support/fixtures.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import { waitFor } from "../support/wait.js";

const YELP_TOKEN = "yelp-platform-token-0123456789";

interface LeadRow {
  id: string;
  received_at: Date | null;
  provider_created_at: Date | null;
  first_response_at: Date | null;
  first_response_by: string | null;
  first_response_seconds: number | null;
  first_response_business_seconds: number | null;
  awaits_response: boolean;
}

describe("speed to lead", () => {
  /** Yelp events per lead id, as the fake Yelp API serves them. */
  const yelpEvents = new Map<string, unknown[]>();
  /** When each fake Yelp lead was created (its time_created and first event's). */
  const yelpCreated = new Map<string, string>();
  /** Yelp lead ids whose posted reply Yelp lists without a channel. */
  const noChannel = new Set<string>();
  const createdOf = (leadId: string) =>
    yelpCreated.get(leadId) ??
    yelpCreated.set(leadId, new Date(Date.now() - 60_000).toISOString()).get(leadId)!;
  const eventsOf = (leadId: string) =>
    yelpEvents.get(leadId) ??
    yelpEvents
      .set(
        leadId,
        CONSUMER_EVENTS.map((event) => ({ ...(event as object), time_created: createdOf(leadId) })),
      )
      .get(leadId)!;
  const yelp = useFakeServer({ status: 201, body: {} }, (request) => {
    const match = /^\/v3\/leads\/([^/?]+)(\/events)?/.exec(request.path);
    if (!match) return undefined;
    const leadId = match[1]!;
    if (request.method === "POST" && match[2]) {
      const { request_content: text } = JSON.parse(request.body) as { request_content: string };
      const events = eventsOf(leadId);
      const ours = bizEvent(`ours-${events.length}`, text);
      events.push(noChannel.has(leadId) ? ours : { ...ours, channel: "API-SELF" });
      return { status: 201, body: {} };
    }
    if (request.method !== "GET") return undefined;
    if (match[2]) return { status: 200, body: { events: eventsOf(leadId) } };
    const created = createdOf(leadId);
    return {
      status: 200,
      body: {
        ...fixture("yelp/api-get-lead.json").json,
        id: leadId,
        time_created: created,
        last_event_time: created,
      },
    };
  });
  const thumbtack = useFakeServer({ status: 201, body: {} }, (request) => {
    if (request.method === "GET") return { status: 200, body: { messages: [] } };
    return undefined;
  });
  const app = useApp({
    worker: true,
    env: () => ({
      YELP_WEBHOOK_TOKEN: YELP_TOKEN,
      YELP_API_BASE_URL: yelp.url,
      THUMBTACK_API_BASE_URL: thumbtack.url,
      JOB_BACKOFF_BASE_MS: "50",
      DISPATCHER_INTERVAL_MS: "300",
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
    }),
  });

  let businesses = 0;
  const connectYelp = async (settings: object) => {
    const business = `speedBiz${++businesses}`;
    const c = await app.createConnection({
      provider: "yelp",
      externalAccountId: business,
      displayName: "Acme Plumbing",
      inboundAuth: { type: "none" },
      credentials: { accessToken: "yelp-access-token" },
      settings,
    });
    return { ...c, business };
  };
  /** Delivers a NEW_EVENT of the Yelp lead (its first event unless `eventId` names another). */
  const deliverYelp = async (business: string, leadId: string, eventId = `ev-${leadId}`) => {
    const body = {
      time: new Date().toISOString(),
      object: "business",
      data: {
        id: business,
        updates: [
          {
            event_type: "NEW_EVENT",
            event_id: eventId,
            lead_id: leadId,
            interaction_time: createdOf(leadId),
          },
        ],
      },
    };
    expect((await post(`${app.url}/webhooks/yelp/${YELP_TOKEN}`, JSON.stringify(body))).status).toBe(202);
  };
  const jobsOf = (tenantId: string, operation: string) =>
    app.sql
      .query<{ status: string }>("SELECT status FROM jobs WHERE tenant_id = $1 AND operation = $2", [
        tenantId,
        operation,
      ])
      .then((result) => result.rows);
  const allSucceeded = (rows: { status: string }[], n: number) =>
    rows.length === n && rows.every((row) => row.status === "succeeded");
  const leadOf = (tenantId: string) =>
    app.sql
      .query<LeadRow>(
        `SELECT id, received_at, provider_created_at, first_response_at, first_response_by, first_response_seconds,
                first_response_business_seconds, awaits_response FROM leads WHERE tenant_id = $1`,
        [tenantId],
      )
      .then((result) => result.rows[0]);
  /** A Thumbtack connection of its own (a tenant each) and a delivery of `body` to it, answered 202. */
  const connectThumbtack = async (externalAccountId: string, settings: object) => {
    const c = await app.createConnection({
      provider: "thumbtack",
      externalAccountId,
      displayName: "Evergreen Deck & Fence",
      inboundAuth: { type: "basic" },
      credentials: { accessToken: "thumbtack-access-token" },
      settings,
    });
    const basic = `Basic ${Buffer.from(`${c.secrets.username}:${c.secrets.password}`).toString("base64")}`;
    const deliver = async (body: string) =>
      expect(
        (await post(`${app.url}/webhooks/thumbtack/${c.connectionId}`, body, { authorization: basic }))
          .status,
      ).toBe(202);
    return { c, deliver };
  };
  /** A Yelp lead of the connection stored as it was at `at` (received and created then): its id. */
  const insertLead = async (
    c: { tenantId: string; connectionId: string },
    prefix: string,
    status: "open" | "placeholder",
    at: Date,
  ) =>
    (
      await app.sql.query<{ id: string }>(
        `INSERT INTO leads (tenant_id, connection_id, provider, external_lead_id, status, last_event_at,
                            received_at, provider_created_at)
         VALUES ($1, $2, 'yelp', $3, $4, $5, $5, $5) RETURNING id`,
        [c.tenantId, c.connectionId, `${prefix}-${randomUUID()}`, status, at],
      )
    ).rows[0]!.id;
  /** The worker's Prometheus text, as its own /metrics port serves it (WORKER_METRICS_PORT). */
  const workerMetrics = () => app.worker.get(Metrics).registry.metrics();
  const yelpPosts = (leadId: string) =>
    yelp.received.filter(
      (request) => request.method === "POST" && request.path === `/v3/leads/${leadId}/events`,
    );

  it("an auto-replied Yelp lead: by auto at the attempt's start, in the lead views, on the worker's /metrics", async () => {
    const c = await connectYelp({ autoResponse: { enabled: true, text: "Thanks {{lead.firstName}}!" } });
    const before = new Date();
    await deliverYelp(c.business, "stl-auto");
    await waitFor(
      () => jobsOf(c.tenantId, "initial-response"),
      (rows) => allSucceeded(rows, 1),
    );
    const lead = await waitFor(
      () => leadOf(c.tenantId),
      (row) => row?.first_response_by === "auto",
    );
    expect(yelpPosts("stl-auto")).toHaveLength(1);
    const created = new Date(createdOf("stl-auto"));
    expect(lead!.provider_created_at).toEqual(created); // Yelp's time_created of the lead
    expect(lead!.received_at!.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
    expect(lead!.awaits_response).toBe(true); // a fresh Yelp lead by webhook
    expect(lead!.first_response_at!.getTime()).toBeGreaterThanOrEqual(lead!.received_at!.getTime());
    expect(lead!.first_response_seconds).toBeGreaterThanOrEqual(0);
    expect(lead!.first_response_business_seconds).toBe(lead!.first_response_seconds); // no hours: the same

    const view = await app.operator.get(`/admin/leads/${lead!.id}`);
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({
      receivedAt: lead!.received_at!.toISOString(),
      providerCreatedAt: created.toISOString(),
      firstResponse: {
        at: lead!.first_response_at!.toISOString(),
        by: "auto",
        seconds: lead!.first_response_seconds,
        businessSeconds: lead!.first_response_seconds,
      },
    });
    expect(view.body).not.toHaveProperty("firstResponseAt");
    const list = await app.operator.get(`/admin/leads?connectionId=${c.connectionId}`);
    expect(list.body.items).toEqual([
      expect.objectContaining({ id: lead!.id, firstResponse: view.body.firstResponse }),
    ]);

    const metrics = await workerMetrics();
    expect(metrics).toMatch(/^leadgate_first_response_seconds_count\{provider="yelp",by="auto"\} [1-9]\d*$/m);
    expect(metrics).toMatch(
      /^leadgate_first_response_seconds_bucket\{le="86400",provider="yelp",by="auto"\} /m,
    );
  });

  it("a lead dated 1970 or in 9999 is stored clamped (400 days before its receipt, its receipt), and marking it replied counts at once", async () => {
    const day = (h: number) => [`${String(h).padStart(2, "0")}:00`, `${String(h).padStart(2, "0")}:30`];
    const weekly = Object.fromEntries(
      ["mon", "tue", "wed", "thu", "fri", "sat", "sun"].map((d) => [d, [1, 4, 8, 12, 16, 23].map(day)]),
    );
    const c = await connectYelp({ businessHours: { timezone: "America/New_York", weekly } });
    yelpCreated.set("stl-1970", new Date(0).toISOString());
    yelpCreated.set("stl-9999", "9999-12-31T00:00:00.000Z");
    await deliverYelp(c.business, "stl-1970");
    await deliverYelp(c.business, "stl-9999");
    await waitFor(
      () => jobsOf(c.tenantId, "lead-upsert"),
      (rows) => allSucceeded(rows, 2),
    );
    const { rows } = await app.sql.query<LeadRow & { external_lead_id: string; last_event_at: Date }>(
      "SELECT * FROM leads WHERE tenant_id = $1 ORDER BY external_lead_id",
      [c.tenantId],
    );
    const [old, future] = rows;
    expect(old!.provider_created_at!.getTime()).toBe(old!.received_at!.getTime() - 400 * 86_400_000);
    expect(old!.last_event_at.getTime()).toBe(old!.received_at!.getTime() - 400 * 86_400_000);
    expect(future!.provider_created_at).toEqual(future!.received_at);
    expect(future!.last_event_at).toEqual(future!.received_at);

    const started = Date.now();
    const marked = await app.operator.post(`/admin/leads/${old!.id}/mark-replied`, { via: "phone" });
    expect(marked.status).toBe(202);
    expect(Date.now() - started).toBeLessThan(5_000); // was a 500 after the transaction's timeout
    const counted = (await app.sql.query<LeadRow>("SELECT * FROM leads WHERE id = $1", [old!.id])).rows[0]!;
    // 400 days of 6 half-hour ranges a day: about 400 × 3 h, DST weeks exact.
    expect(counted.first_response_business_seconds).toBeGreaterThan(399 * 3 * 3600);
    expect(counted.first_response_business_seconds).toBeLessThan(402 * 3 * 3600);
  });

  it("the business answered during the delay: by business at its event's time, no auto-reply", async () => {
    const c = await connectYelp({ autoResponse: { enabled: true, text: "Thanks!", delaySeconds: 3 } });
    await deliverYelp(c.business, "stl-business-first");
    await waitFor(
      () =>
        app.sql.query(
          "SELECT waiting_for FROM jobs WHERE tenant_id = $1 AND operation = 'initial-response'",
          [c.tenantId],
        ),
      (result) => result.rows[0]?.waiting_for === "delay",
    );
    const answered = bizEvent("owner-1", "Hi Marta, I can come by at 3pm today.");
    eventsOf("stl-business-first").push(answered);
    await waitFor(
      () => jobsOf(c.tenantId, "initial-response"),
      (rows) => allSucceeded(rows, 1),
      15_000,
    );
    const lead = await waitFor(
      () => leadOf(c.tenantId),
      (row) => row?.first_response_by !== null,
    );
    expect(yelpPosts("stl-business-first")).toEqual([]);
    expect(lead).toMatchObject({
      first_response_by: "business",
      first_response_at: new Date(answered.time_created),
    });
  });

  it("Yelp: a channel-less BIZ event with our reply's text is ours, not the business's", async () => {
    noChannel.add("stl-no-channel");
    const c = await connectYelp({ autoResponse: { enabled: true, text: "Thanks {{lead.firstName}}!" } });
    await deliverYelp(c.business, "stl-no-channel");
    await waitFor(
      () => jobsOf(c.tenantId, "initial-response"),
      (rows) => allSucceeded(rows, 1),
    );
    const auto = await waitFor(
      () => leadOf(c.tenantId),
      (row) => row?.first_response_by === "auto",
    );
    // Yelp's webhook of our own (channel-less) event: its lead-upsert reads it among the events.
    const ours = eventsOf("stl-no-channel").at(-1) as { id: string; time_created: string };
    // Dated before our reply's start, it would correct firstResponse earlier if it counted as the business's.
    ours.time_created = new Date(auto!.first_response_at!.getTime() - 1_000).toISOString();
    await deliverYelp(c.business, "stl-no-channel", ours.id);
    await waitFor(
      () => jobsOf(c.tenantId, "lead-upsert"),
      (rows) => allSucceeded(rows, 2),
    );
    await app.settled();
    expect(await leadOf(c.tenantId)).toMatchObject({
      first_response_by: "auto",
      first_response_at: auto!.first_response_at,
    });
  });

  it("Thumbtack: the business's message by webhook sets by business; a later one never moves it later", async () => {
    const { c, deliver } = await connectThumbtack("700000000000000404", {});
    await deliver(fixture("thumbtack/negotiation-created-v4.json").text);
    await deliver(fixture("thumbtack/message-created-v4-business.json").text);
    await waitFor(
      () => jobsOf(c.tenantId, "lead-upsert"),
      (rows) => allSucceeded(rows, 2),
    );
    const lead = await waitFor(
      () => leadOf(c.tenantId),
      (row) => row?.first_response_by !== null,
    );
    expect(lead).toMatchObject({
      provider_created_at: new Date("2026-04-02T15:20:01Z"), // the negotiation's createdAt
      first_response_by: "business",
      first_response_at: new Date("2026-04-02T15:31:00Z"), // the message's sentAt
      first_response_seconds: 659,
      awaits_response: false, // months old when it arrived
    });
    const later = fixture("thumbtack/message-created-v4-business.json").json as {
      data: Record<string, unknown>;
    };
    later.data.messageID = "700000000000000809";
    later.data.sentAt = "2026-04-02T16:00:00Z";
    await deliver(JSON.stringify(later));
    await waitFor(
      () => jobsOf(c.tenantId, "lead-upsert"),
      (rows) => allSucceeded(rows, 3),
    );
    expect(await leadOf(c.tenantId)).toMatchObject({ first_response_at: new Date("2026-04-02T15:31:00Z") });
    const metrics = await workerMetrics();
    expect(metrics).toMatch(
      /^leadgate_first_response_seconds_count\{provider="thumbtack",by="business"\} 1$/m,
    );
  });

  it("Thumbtack: the business's message before its negotiation counts again from the negotiation's time", async () => {
    // 2026-04-02 is a Thursday: open from 15:25, five minutes after the negotiation's 15:20:01.
    const { c, deliver } = await connectThumbtack("700000000000000405", {
      businessHours: { timezone: "UTC", weekly: { thu: [["15:25", "18:00"]] } },
    });
    const observed = async () =>
      Number(
        /^leadgate_first_response_seconds_count\{provider="thumbtack",by="business"\} (\d+)$/m.exec(
          await workerMetrics(),
        )?.[1] ?? 0,
      );
    const before = await observed();
    await deliver(fixture("thumbtack/message-created-v4-business.json").text);
    const early = await waitFor(
      () => leadOf(c.tenantId),
      (row) => row?.first_response_by === "business",
    );
    // Only the message known: the lead counts from the message's own time, so the answer took 0 s.
    expect(early).toMatchObject({ first_response_seconds: 0, first_response_business_seconds: 0 });
    await deliver(fixture("thumbtack/negotiation-created-v4.json").text);
    await waitFor(
      () => jobsOf(c.tenantId, "lead-upsert"),
      (rows) => allSucceeded(rows, 2),
    );
    expect(await leadOf(c.tenantId)).toMatchObject({
      provider_created_at: new Date("2026-04-02T15:20:01Z"),
      first_response_by: "business",
      first_response_at: new Date("2026-04-02T15:31:00Z"),
      first_response_seconds: 659,
      first_response_business_seconds: 360, // 15:25 to 15:31
    });
    // Recounted, not a second response: the histogram observed one.
    expect(await observed()).toBe(before + 1);
  });

  it("a Static Forms lead does not await a response", async () => {
    const c = await app.createConnection({ provider: "staticforms", inboundAuth: { type: "bearer" } });
    const body = { event: "form.submitted", data: { submissionId: "stl-s1", formData: { name: "Ann" } } };
    const headers = { authorization: `Bearer ${c.secrets.bearerToken}` };
    expect((await post(`${app.url}/webhooks/staticforms/${c.connectionId}`, body, headers)).status).toBe(202);
    const lead = await waitFor(
      () => leadOf(c.tenantId),
      (row) => row !== undefined,
    );
    expect(lead).toMatchObject({ awaits_response: false, first_response_at: null });
    expect(lead!.received_at).not.toBeNull();
    expect((await app.operator.get(`/admin/leads/${lead!.id}`)).body).toMatchObject({ firstResponse: null });
  });

  it("a creation time that moves earlier after the response was counted: nothing written, 'moved' (counted again by the caller)", async () => {
    const c = await connectYelp({});
    const created = new Date("2026-04-02T15:31:00Z");
    const leadId = await insertLead(c, "stl-moved", "placeholder", created);
    // mark-replied counts before its transaction (countResponse); a concurrent lead-upsert's earlier
    // creation time commits before the transaction's read.
    await app.sql.query("UPDATE leads SET provider_created_at = $2 WHERE id = $1", [
      leadId,
      new Date("2026-04-02T15:20:01Z"),
    ]);
    const at = new Date("2026-04-02T15:31:00Z");
    const counted = countResponse(created, at, null);
    const recorded = await app.worker
      .get(Transactions)
      .run((tx) =>
        app.worker.get(FirstResponses).recordIn(tx, c.tenantId, leadId, { at, by: "business" }, counted),
      );
    expect(recorded).toBe("moved");
    expect(await leadOf(c.tenantId)).toMatchObject({ first_response_at: null });
    // Counted from the time as it is now, it is written.
    const again = countResponse(new Date("2026-04-02T15:20:01Z"), at, null);
    await expect(
      app.worker
        .get(Transactions)
        .run((tx) =>
          app.worker.get(FirstResponses).recordIn(tx, c.tenantId, leadId, { at, by: "business" }, again),
        ),
    ).resolves.toEqual({ provider: "yelp", by: "business", seconds: 659, businessSeconds: 659 });
    expect(await leadOf(c.tenantId)).toMatchObject({ first_response_at: at, first_response_seconds: 659 });
  });

  it("the business clock: a lead at 17:55 answered at 08:05 the next morning counts 600 s of hours", async () => {
    const c = await connectYelp({});
    const leadId = await insertLead(c, "stl-night", "open", new Date("2026-03-10T17:55:00-04:00"));
    const hours = {
      timezone: "America/New_York",
      weekly: Object.fromEntries(
        ["mon", "tue", "wed", "thu", "fri", "sat", "sun"].map((day) => [day, [["08:00", "18:00"]]]),
      ),
    };
    const responses = app.worker.get(FirstResponses);
    const answeredAt = new Date("2026-03-11T08:05:00-04:00");
    await expect(
      responses.record(c.tenantId, leadId, { at: answeredAt, by: "business" }, hours),
    ).resolves.toEqual({
      provider: "yelp",
      by: "business",
      seconds: 14 * 3600 + 10 * 60,
      businessSeconds: 600,
    });
    // A later response changes nothing; an earlier one that shows up late corrects it.
    await expect(
      responses.record(c.tenantId, leadId, { at: new Date("2026-03-11T09:00:00-04:00"), by: "auto" }, hours),
    ).resolves.toBeUndefined();
    await expect(
      responses.record(c.tenantId, leadId, { at: new Date("2026-03-10T17:58:00-04:00"), by: "auto" }, hours),
    ).resolves.toEqual({ provider: "yelp", by: "auto", seconds: 180, businessSeconds: 180 });
    expect(await leadOf(c.tenantId)).toMatchObject({
      first_response_by: "auto",
      first_response_seconds: 180,
      first_response_business_seconds: 180,
    });
  });
});

/** The consumer's first message, which every fake lead starts with. */
const CONSUMER_EVENTS = (fixture("yelp/api-lead-events.json").json as { events: unknown[] }).events;

/** A Yelp event written by the business (`BIZ`), without a channel. */
function bizEvent(id: string, text: string) {
  return {
    id,
    cursor: `cursor-${id}`,
    event_type: "TEXT",
    user_type: "BIZ",
    user_display_name: "Acme Plumbing",
    time_created: new Date().toISOString(),
    event_content: { text },
  };
}
