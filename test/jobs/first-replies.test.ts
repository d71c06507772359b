// First replies end to end (api.md "First replies"): webhooks over HTTP to the real API, the real
// worker, and Yelp's and Thumbtack's APIs as real HTTP servers on loopback that record what they
// received. The template renders the lead as its lead-upsert stored it; the hours pick the variant;
// the delay yields to a person at the business; the rendered text is stored before the call.
import { attemptHistory, OPERATOR_KEY } from "../support/admin.js";
import type { ReceivedRequest } from "../support/fake-server.js";
import { fixture } from "../support/fixtures.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import { waitFor } from "../support/wait.js";

const YELP_TOKEN = "yelp-platform-token-0123456789";
const TEMPLATE =
  "Hi {{lead.firstName|there}}, thanks for asking {{business.name}} about {{lead.service}} on {{provider}}.";
const ALWAYS_CLOSED = { timezone: "America/New_York", weekly: {} };
const ALWAYS_OPEN = {
  timezone: "Asia/Kolkata",
  weekly: Object.fromEntries(
    ["mon", "tue", "wed", "thu", "fri", "sat", "sun"].map((day) => [day, [["00:00", "24:00"]]]),
  ),
};

describe("first replies", () => {
  /** Yelp events per lead id, as the fake Yelp API serves them (a test adds the business's own). */
  const yelpEvents = new Map<string, unknown[]>();
  /** Yelp lead ids whose reply POST answers only after the worker's side-effect timeout (it still lands). */
  const yelpSlow = new Set<string>();
  const eventsOf = (leadId: string) =>
    yelpEvents.get(leadId) ?? yelpEvents.set(leadId, [...CONSUMER_EVENTS]).get(leadId)!;
  const yelp = useFakeServer({ status: 201, body: {} }, (request) => {
    const match = /^\/v3\/leads\/([^/?]+)(\/events)?/.exec(request.path);
    if (!match) return undefined;
    const leadId = match[1]!;
    if (request.method === "POST" && match[2]) {
      const { request_content: text } = JSON.parse(request.body) as { request_content: string };
      // The reply lands at Yelp (the next read shows it as our API-SELF event) however slow the answer.
      const events = eventsOf(leadId);
      events.push({ ...bizEvent(`ours-${events.length}`, text), channel: "API-SELF" });
      return { status: 201, body: {}, delayMs: yelpSlow.delete(leadId) ? 5_000 : 0 };
    }
    if (request.method !== "GET") return undefined;
    if (match[2]) return { status: 200, body: { events: eventsOf(leadId) } };
    return { status: 200, body: { ...fixture("yelp/api-get-lead.json").json, id: leadId } };
  });
  const thumbtackMessages = new Map<string, unknown[]>();
  const thumbtack = useFakeServer({ status: 201, body: {} }, (request) => {
    const match = /^\/api\/v4\/negotiations\/([^/]+)\/messages/.exec(request.path);
    if (!match || request.method !== "GET") return undefined;
    return { status: 200, body: { messages: thumbtackMessages.get(match[1]!) ?? [] } };
  });
  const app = useApp({
    worker: true,
    env: () => ({
      YELP_WEBHOOK_TOKEN: YELP_TOKEN,
      YELP_API_BASE_URL: yelp.url,
      THUMBTACK_API_BASE_URL: thumbtack.url,
      JOB_BACKOFF_BASE_MS: "50",
      SIDE_EFFECT_TIMEOUT_MS: "2000",
      DISPATCHER_INTERVAL_MS: "300",
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
    }),
  });

  let businesses = 0;
  /** A Yelp connection of a new business; answers it and the business id. */
  const connectYelp = async (settings: object) => {
    const business = `firstReplyBiz${++businesses}`;
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
  /** Delivers a new event of a new Yelp lead for the connection's business; answers the lead id. */
  const deliverYelpLead = async (business: string, leadId: string) => {
    const body = fixture("yelp/new-event.json").json as { data: { id: string; updates: object[] } };
    body.data.id = business;
    body.data.updates = body.data.updates.map((update) => ({
      ...update,
      lead_id: leadId,
      event_id: `ev-${leadId}`,
    }));
    const answer = await post(`${app.url}/webhooks/yelp/${YELP_TOKEN}`, JSON.stringify(body));
    expect(answer.status).toBe(202);
    return leadId;
  };
  const replyJob = (tenantId: string) =>
    app.sql
      .query<{ id: string; status: string; waiting_for: string | null; attempts: number; job_key: string }>(
        "SELECT id, status, waiting_for, attempts, job_key FROM jobs WHERE tenant_id = $1 AND operation = 'initial-response'",
        [tenantId],
      )
      .then((result) => result.rows[0]);
  const sideEffect = (jobKey: string) =>
    app.sql
      .query<{
        status: string;
        external_ref: string | null;
        request: { text: string; variant: string } | null;
      }>("SELECT status, external_ref, request FROM side_effects WHERE job_key = $1", [jobKey])
      .then((result) => result.rows[0]);
  /** The texts Yelp received as replies to the lead. */
  const sentTo = (leadId: string) => yelpPosts(leadId).map((request) => textOf(request.body));
  const yelpPosts = (leadId: string) =>
    yelp.received.filter(
      (request: ReceivedRequest) =>
        request.method === "POST" && request.path === `/v3/leads/${leadId}/events`,
    );
  const jobView = async (id: string): Promise<unknown> =>
    (await app.operator.get(`/admin/jobs/${id}`)).body as unknown;

  it("Yelp: the template rendered with the lead as stored, as Yelp received it; text and variant stored first", async () => {
    const c = await connectYelp({ autoResponse: { enabled: true, text: TEMPLATE } });
    const leadId = await deliverYelpLead(c.business, "fr-yelp-merge");
    const job = await waitFor(
      () => replyJob(c.tenantId),
      (row) => row?.status === "succeeded",
    );
    const expected = "Hi Marta, thanks for asking Acme Plumbing about Water Heater Repair on Yelp.";
    expect(yelpPosts(leadId).map((request) => JSON.parse(request.body) as unknown)).toEqual([
      { request_type: "TEXT", request_content: expected },
    ]);
    expect(await sideEffect(job!.job_key)).toEqual({
      status: "succeeded",
      external_ref: null,
      request: { text: expected, variant: "business-hours" },
    });
    expect(await jobView(job!.id)).toMatchObject({ result: { status: "done" } });
  });

  it("Thumbtack: the customer's first name and the request's category, as Thumbtack received them", async () => {
    const c = await app.createConnection({
      provider: "thumbtack",
      externalAccountId: "700000000000000404",
      displayName: "Evergreen Deck & Fence",
      inboundAuth: { type: "basic" },
      credentials: { accessToken: "thumbtack-access-token" },
      settings: { autoResponse: { enabled: true, text: TEMPLATE } },
    });
    const basic = `Basic ${Buffer.from(`${c.secrets.username}:${c.secrets.password}`).toString("base64")}`;
    const answer = await post(
      `${app.url}/webhooks/thumbtack/${c.connectionId}`,
      fixture("thumbtack/negotiation-created-v4.json").text,
      { authorization: basic },
    );
    expect(answer.status).toBe(202);
    await waitFor(
      () => replyJob(c.tenantId),
      (row) => row?.status === "succeeded",
    );
    const sent = thumbtack.received.filter(
      (request) =>
        request.method === "POST" && /\/negotiations\/700000000000000202\/messages$/.test(request.path),
    );
    expect(sent.map((request) => (JSON.parse(request.body) as { text: string }).text)).toEqual([
      "Hi Priya, thanks for asking Evergreen Deck & Fence about Fence Repair on Thumbtack.",
    ]);
  });

  it("outside business hours: the after-hours text, recorded as the after-hours variant", async () => {
    const c = await connectYelp({
      autoResponse: {
        enabled: true,
        text: TEMPLATE,
        afterHoursText: "We are closed, {{lead.firstName}}; we call back at 8.",
      },
      businessHours: ALWAYS_CLOSED,
    });
    const leadId = await deliverYelpLead(c.business, "fr-yelp-after-hours");
    const job = await waitFor(
      () => replyJob(c.tenantId),
      (row) => row?.status === "succeeded",
    );
    expect(sentTo(leadId)).toEqual(["We are closed, Marta; we call back at 8."]);
    expect((await sideEffect(job!.job_key))?.request?.variant).toBe("after-hours");
  });

  it("inside business hours in another zone: the business-hours text", async () => {
    const c = await connectYelp({
      autoResponse: { enabled: true, text: "Open: {{lead.name}}", afterHoursText: "Closed" },
      businessHours: ALWAYS_OPEN,
    });
    const leadId = await deliverYelpLead(c.business, "fr-yelp-open");
    await waitFor(
      () => replyJob(c.tenantId),
      (row) => row?.status === "succeeded",
    );
    expect(sentTo(leadId)).toEqual(["Open: Marta K."]);
  });

  it("the delay: waits (no attempt) and yields to the business that answered meanwhile, sending nothing", async () => {
    const c = await connectYelp({ autoResponse: { enabled: true, text: TEMPLATE, delaySeconds: 4 } });
    const leadId = await deliverYelpLead(c.business, "fr-yelp-takeover");
    const waiting = await waitFor(
      () => replyJob(c.tenantId),
      (row) => row?.waiting_for === "delay",
    );
    expect(await jobView(waiting!.id)).toMatchObject({ status: "waiting", waitingFor: "delay", attempts: 0 });
    // A person at the business answers on Yelp during the delay; no webhook tells Leadgate (it may lag).
    yelpEvents.get(leadId)!.push(bizEvent("owner-1", "Hi Marta, I can come by at 3pm today."));
    const done = await waitFor(
      () => replyJob(c.tenantId),
      (row) => row?.status === "succeeded",
      15_000,
    );
    await app.settled();
    expect(yelpPosts(leadId)).toEqual([]);
    expect(await jobView(done!.id)).toMatchObject({
      result: { status: "skipped", ref: "business_already_replied" },
      attempts: 1,
    });
  });

  it("the delay: no person answered, so the reply goes once the delay is over, and not before", async () => {
    const c = await connectYelp({
      autoResponse: { enabled: true, text: "Thanks {{lead.firstName}}!", delaySeconds: 2 },
    });
    const started = Date.now();
    const leadId = await deliverYelpLead(c.business, "fr-yelp-delayed");
    await waitFor(
      () => replyJob(c.tenantId),
      (row) => row?.status === "succeeded",
      15_000,
    );
    const [sent] = yelpPosts(leadId);
    expect(textOf(sent!.body)).toBe("Thanks Marta!");
    expect(sent!.at - started).toBeGreaterThanOrEqual(2_000);
  });

  it("tenant defaults: a connection without its own reply sends the tenant's; one with its own sends its own", async () => {
    const inheriting = await connectYelp({});
    const defaults = {
      autoResponse: { enabled: true, text: "The agency's default for {{lead.firstName}}." },
      businessHours: ALWAYS_OPEN,
    };
    expect((await app.operator.patch(`/admin/tenants/${inheriting.tenantId}`, { defaults })).status).toBe(
      200,
    );
    const own = await connectYelp({ autoResponse: { enabled: true, text: "Our own, {{lead.name}}" } });
    // Another tenant's connection: same defaults patched, then overridden by its own text.
    expect((await app.operator.patch(`/admin/tenants/${own.tenantId}`, { defaults })).status).toBe(200);
    const inheritingLead = await deliverYelpLead(inheriting.business, "fr-yelp-inherits");
    const ownLead = await deliverYelpLead(own.business, "fr-yelp-own");
    await waitFor(
      () => replyJob(inheriting.tenantId),
      (row) => row?.status === "succeeded",
    );
    await waitFor(
      () => replyJob(own.tenantId),
      (row) => row?.status === "succeeded",
    );
    expect(sentTo(inheritingLead)).toEqual(["The agency's default for Marta."]);
    expect(sentTo(ownLead)).toEqual(["Our own, Marta K."]);
  });

  it("a retry after an unknown outcome looks for the text it stored, not for today's template", async () => {
    const c = await connectYelp({
      autoResponse: { enabled: true, text: "First version, {{lead.firstName}}." },
    });
    yelpSlow.add("fr-yelp-unknown");
    const leadId = await deliverYelpLead(c.business, "fr-yelp-unknown");
    // Yelp holds the first attempt's POST for 5 s, so the attempt times out after 2 s (its
    // outcome unknown). The template changes while that POST is held: before the retry.
    await waitFor(
      () => Promise.resolve(yelpPosts(leadId).length),
      (n) => n === 1,
    );
    const {
      rows: [changed],
    } = await app.sql.query<{ at: Date }>(
      `UPDATE connections SET settings = jsonb_set(settings, '{autoResponse,text}', '"Second version"')
       WHERE id = $1 RETURNING clock_timestamp() AS at`,
      [c.connectionId],
    );
    const job = await waitFor(
      () => replyJob(c.tenantId),
      (row) => row?.status === "succeeded",
      15_000,
    );
    const history = await attemptHistory(app.operator, job!.id);
    // The first attempt timed out after the change, and the next one succeeded.
    expect(history.map(({ number, outcome, errorCode }) => ({ number, outcome, errorCode }))).toEqual([
      { number: 1, outcome: "retryable", errorCode: "timeout" },
      { number: 2, outcome: "succeeded", errorCode: null },
    ]);
    expect(Date.parse(history[0]!.finishedAt!)).toBeGreaterThanOrEqual(changed!.at.getTime() - 1);
    expect(job!.attempts).toBe(2);
    expect(yelpPosts(leadId)).toHaveLength(1);
    expect(await sideEffect(job!.job_key)).toEqual({
      status: "succeeded",
      external_ref: "reconciled", // found the stored text among the lead's events
      request: { text: "First version, Marta.", variant: "business-hours" },
    });
  });
});

/** The text of a Yelp reply request's body. */
const textOf = (body: string) => (JSON.parse(body) as { request_content: string }).request_content;

/** The consumer's first message, which every fake lead starts with. */
const CONSUMER_EVENTS = (fixture("yelp/api-lead-events.json").json as { events: unknown[] }).events;

/** A Yelp event written by the business (`BIZ`). */
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

describe("first replies: a delay survives the worker", () => {
  const events = new Map<string, unknown[]>();
  const yelp = useFakeServer({ status: 201, body: {} }, (request) => {
    const match = /^\/v3\/leads\/([^/?]+)(\/events)?/.exec(request.path);
    if (!match) return undefined;
    const list = events.get(match[1]!) ?? events.set(match[1]!, [...CONSUMER_EVENTS]).get(match[1]!)!;
    if (request.method === "POST") {
      list.push({ ...bizEvent("ours", textOf(request.body)), channel: "API-SELF" });
      return { status: 201, body: {} };
    }
    if (match[2]) return { status: 200, body: { events: list } };
    return { status: 200, body: { ...fixture("yelp/api-get-lead.json").json, id: match[1] } };
  });
  const app = useApp({
    env: () => ({
      YELP_WEBHOOK_TOKEN: YELP_TOKEN,
      YELP_API_BASE_URL: yelp.url,
      DISPATCHER_INTERVAL_MS: "300",
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
    }),
  });

  it("kill -9 of the worker during the wait: the next worker sends one reply, once the delay is over", async () => {
    const c = await app.createConnection({
      provider: "yelp",
      externalAccountId: "restartBiz",
      displayName: "Acme Plumbing",
      inboundAuth: { type: "none" },
      credentials: { accessToken: "yelp-access-token" },
      settings: { autoResponse: { enabled: true, text: "Thanks {{lead.firstName}}!", delaySeconds: 5 } },
    });
    const first = app.spawn("dist/worker.js");
    await first.waitFor(/worker started/);
    const body = fixture("yelp/new-event.json").json as { data: { id: string; updates: object[] } };
    body.data.id = "restartBiz";
    body.data.updates = body.data.updates.map((update) => ({
      ...update,
      lead_id: "fr-restart",
      event_id: "ev-restart",
    }));
    const started = Date.now();
    expect((await post(`${app.url}/webhooks/yelp/${YELP_TOKEN}`, JSON.stringify(body))).status).toBe(202);
    const job = () =>
      app.sql
        .query<{ status: string; waiting_for: string | null }>(
          "SELECT status, waiting_for FROM jobs WHERE tenant_id = $1 AND operation = 'initial-response'",
          [c.tenantId],
        )
        .then((result) => result.rows[0]);
    await waitFor(job, (row) => row?.waiting_for === "delay");
    first.child.kill("SIGKILL");
    await first.exited;
    const second = app.spawn("dist/worker.js");
    await second.waitFor(/worker started/);
    await waitFor(job, (row) => row?.status === "succeeded", 20_000);
    const posts = yelp.received.filter((request) => request.method === "POST");
    expect(posts.map((request) => textOf(request.body))).toEqual(["Thanks Marta!"]);
    expect(posts[0]!.at - started).toBeGreaterThanOrEqual(5_000);
  });
});
