// Yelp leads end to end: the phone consent events, and the lead's whole
// event history paged from a fake Yelp API on loopback that answers as providers.md describes
// (`{"events": [...]}`, at most `limit` events, newest last, each with its `cursor`).
import { OPERATOR_KEY } from "../support/admin.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import type { TestConnection } from "../support/tenants.js";
import { waitFor } from "../support/wait.js";

const YELP_TOKEN = "yelp-platform-token-0123456789";
const PHONE = "4155550100";

interface FakeEvent {
  id: string;
  cursor: string;
  event_type: string;
  user_type: string;
  user_display_name: string;
  event_content: { text: string };
  time_created: string;
}

/** `count` consumer events in list order (oldest first); `time_created` runs backwards unless told. */
const makeEvents = (prefix: string, count: number, from = 0, timesAgree = false): FakeEvent[] =>
  Array.from({ length: count }, (_, index) => {
    const n = from + index + 1;
    const minutes = timesAgree ? n : 10_000 - n;
    return {
      id: `${prefix}_ev${String(n).padStart(3, "0")}`,
      cursor: `${prefix}_cur${String(n).padStart(3, "0")}`,
      event_type: "TEXT",
      user_type: "CONSUMER",
      user_display_name: "Marta K.",
      event_content: { text: `message ${n}` },
      time_created: new Date(Date.UTC(2026, 2, 1) + minutes * 60_000).toISOString(),
    };
  });

describe("Yelp leads: phone consent and complete history", () => {
  /** Each lead's events served by the fake Yelp, in list order (newest last). */
  const yelpEvents = new Map<string, FakeEvent[]>();
  /** The phone number the fake Yelp's lead carries, per lead id. */
  const yelpPhones = new Map<string, string | null>();
  const yelp = useFakeServer({ status: 201, body: {} }, (request) => {
    const url = new URL(request.path, "http://fake");
    const match = /^\/v3\/leads\/([^/]+)(\/events)?$/.exec(url.pathname);
    if (!match || request.method !== "GET") return undefined;
    const leadId = decodeURIComponent(match[1]!);
    if (!match[2]) {
      return {
        status: 200,
        body: {
          id: leadId,
          user: { display_name: "Marta K." },
          phone_number: yelpPhones.get(leadId) ?? null,
          last_event_time: "2026-03-14T16:05:39+00:00",
        },
      };
    }
    // GET /v3/leads/{id}/events?limit=1..20 with older_than_cursor / newer_than_cursor.
    const all = yelpEvents.get(leadId) ?? [];
    const limit = Number(url.searchParams.get("limit") ?? "20");
    if (!Number.isInteger(limit) || limit < 1 || limit > 20) return { status: 400, body: {} };
    const older = url.searchParams.get("older_than_cursor");
    const newer = url.searchParams.get("newer_than_cursor");
    const at = (cursor: string) => all.findIndex((event) => event.cursor === cursor);
    if ((older !== null && at(older) < 0) || (newer !== null && at(newer) < 0))
      return { status: 400, body: {} };
    const events =
      older !== null
        ? all.slice(Math.max(0, at(older) - limit), at(older))
        : newer !== null
          ? all.slice(at(newer) + 1, at(newer) + 1 + limit)
          : all.slice(-limit);
    return { status: 200, body: { events } };
  });
  const crm = useFakeServer({ status: 200, body: {} });
  const app = useApp({
    worker: true,
    env: () => ({
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      YELP_WEBHOOK_TOKEN: YELP_TOKEN,
      YELP_API_BASE_URL: yelp.url,
      JOB_BACKOFF_BASE_MS: "50",
      DISPATCHER_INTERVAL_MS: "300",
    }),
  });

  let connections = 0;
  const connect = async (): Promise<TestConnection & { business: string }> => {
    const business = `bizYelpLead_${String(++connections).padStart(10, "0")}`;
    const created = await app.createConnection({
      provider: "yelp",
      externalAccountId: business,
      inboundAuth: { type: "none" },
      credentials: { accessToken: `token-${business}` },
      settings: { crmDestination: { url: `${crm.url}/crm/${business}` } },
    });
    return { ...created, business };
  };
  const deliver = async (business: string, update: Record<string, string>, time: string) => {
    const body = { time, object: "business", data: { id: business, updates: [update] } };
    expect((await post(`${app.url}/webhooks/yelp/${YELP_TOKEN}`, body)).status).toBe(202);
  };
  let eventCounter = 0;
  const newEvent = (business: string, leadId: string) =>
    deliver(
      business,
      { event_type: "NEW_EVENT", event_id: `evNew${++eventCounter}`, lead_id: leadId },
      "2026-03-14T16:05:42+00:00",
    );
  const phoneEvent = (business: string, leadId: string, type: "IN" | "OUT", time: string) =>
    deliver(business, { event_type: `CONSUMER_PHONE_NUMBER_OPT_${type}_EVENT`, lead_id: leadId }, time);
  /** Waits until every job of the tenant finished (`count` of them). */
  const jobsDone = (tenantId: string, count: number) =>
    waitFor(
      () =>
        app.sql
          .query<{ id: string; operation: string; status: string }>(
            "SELECT id, operation, status FROM jobs WHERE tenant_id = $1 ORDER BY created_at, operation",
            [tenantId],
          )
          .then((result) => result.rows),
      (rows) => rows.length === count && rows.every((row) => ["succeeded", "dead"].includes(row.status)),
      30_000,
    );
  const leadView = async (tenantId: string) => {
    const { rows } = await app.sql.query<{ id: string }>("SELECT id FROM leads WHERE tenant_id = $1", [
      tenantId,
    ]);
    expect(rows).toHaveLength(1);
    const answer = await app.operator.get(`/admin/leads/${rows[0]!.id}`);
    expect(answer.status).toBe(200);
    return answer.body as {
      phone: string | null;
      phoneConsent: boolean | null;
      messages: { externalId: string; text: string }[];
    };
  };

  describe("phone consent", () => {
    it("an opt-out clears the phone and records false; an opt-in records true with the number; the CRM gets both", async () => {
      const c = await connect();
      yelpEvents.set("leadConsent1", makeEvents("c1", 1));
      yelpPhones.set("leadConsent1", PHONE);
      await newEvent(c.business, "leadConsent1");
      await jobsDone(c.tenantId, 2);
      expect(await leadView(c.tenantId)).toMatchObject({ phone: PHONE, phoneConsent: null });

      await phoneEvent(c.business, "leadConsent1", "OUT", "2026-03-14T18:41:10+00:00");
      await jobsDone(c.tenantId, 4);
      expect(await leadView(c.tenantId)).toMatchObject({ phone: null, phoneConsent: false });
      const optOutDelivery = await crmBodyOf(c, "CONSUMER_PHONE_NUMBER_OPT_OUT_EVENT");
      expect(optOutDelivery.data.lead).toMatchObject({ phone: null, phoneConsent: false });

      await phoneEvent(c.business, "leadConsent1", "IN", "2026-03-14T19:00:00+00:00");
      await jobsDone(c.tenantId, 6);
      expect(await leadView(c.tenantId)).toMatchObject({ phone: PHONE, phoneConsent: true });
      const optInDelivery = await crmBodyOf(c, "CONSUMER_PHONE_NUMBER_OPT_IN_EVENT");
      expect(optInDelivery.data.lead).toMatchObject({ phone: PHONE, phoneConsent: true });
    });

    it("a NEW_EVENT after an opt-out does not bring the phone back", async () => {
      const c = await connect();
      yelpEvents.set("leadConsent2", makeEvents("c2", 1));
      yelpPhones.set("leadConsent2", PHONE);
      await phoneEvent(c.business, "leadConsent2", "OUT", "2026-03-14T18:41:10+00:00");
      await jobsDone(c.tenantId, 2);
      await newEvent(c.business, "leadConsent2");
      await jobsDone(c.tenantId, 4);
      expect(await leadView(c.tenantId)).toMatchObject({ phone: null, phoneConsent: false });
    });

    it("an older consent event delivered late never overrides a newer one", async () => {
      const c = await connect();
      yelpEvents.set("leadConsent3", makeEvents("c3", 1));
      yelpPhones.set("leadConsent3", PHONE);
      // Newer opt-out first, then an older opt-in: still opted out, no phone.
      await phoneEvent(c.business, "leadConsent3", "OUT", "2026-03-14T18:41:10+00:00");
      await jobsDone(c.tenantId, 2);
      await phoneEvent(c.business, "leadConsent3", "IN", "2026-03-14T18:00:00+00:00");
      await jobsDone(c.tenantId, 4);
      expect(await leadView(c.tenantId)).toMatchObject({ phone: null, phoneConsent: false });
      // A newer opt-in, then an older opt-out: still opted in, with the number.
      await phoneEvent(c.business, "leadConsent3", "IN", "2026-03-14T20:00:00+00:00");
      await jobsDone(c.tenantId, 6);
      await phoneEvent(c.business, "leadConsent3", "OUT", "2026-03-14T19:00:00+00:00");
      await jobsDone(c.tenantId, 8);
      expect(await leadView(c.tenantId)).toMatchObject({ phone: PHONE, phoneConsent: true });
    });

    it("an opt-in dated in the far future is accepted but counts as received now: a later opt-out wins", async () => {
      const c = await connect();
      yelpEvents.set("leadConsentFuture", makeEvents("cf", 1));
      yelpPhones.set("leadConsentFuture", PHONE);
      // A forged (or broken) time up to year 9999: still answered 202, the lead still opted in.
      await phoneEvent(c.business, "leadConsentFuture", "IN", "9999-12-31T23:59:59+00:00");
      await jobsDone(c.tenantId, 2);
      expect(await leadView(c.tenantId)).toMatchObject({ phone: PHONE, phoneConsent: true });
      await phoneEvent(c.business, "leadConsentFuture", "OUT", new Date(Date.now() + 1000).toISOString());
      await jobsDone(c.tenantId, 4);
      expect(await leadView(c.tenantId)).toMatchObject({ phone: null, phoneConsent: false });
    });

    it("an opt-out and an opt-in of the same time: the opt-out wins, whichever comes last", async () => {
      for (const [lead, order] of [
        ["leadConsentTie1", ["OUT", "IN"]],
        ["leadConsentTie2", ["IN", "OUT"]],
      ] as const) {
        const c = await connect();
        yelpEvents.set(lead, makeEvents(lead, 1));
        yelpPhones.set(lead, PHONE);
        await phoneEvent(c.business, lead, order[0], "2026-03-14T18:41:10+00:00");
        await jobsDone(c.tenantId, 2);
        await phoneEvent(c.business, lead, order[1], "2026-03-14T18:41:10+00:00");
        await jobsDone(c.tenantId, 4);
        expect(await leadView(c.tenantId)).toMatchObject({ phone: null, phoneConsent: false });
      }
    });

    /** The body of the CRM delivery of the event of `eventType` (it runs after the event's lead-upsert). */
    async function crmBodyOf(c: TestConnection & { business: string }, eventType: string) {
      type Body = { data: { payload: { event_type?: string }; lead: Record<string, unknown> } };
      const bodies = () =>
        crm.received
          .filter((request) => request.path === `/crm/${c.business}`)
          .map((request) => JSON.parse(request.body) as Body)
          .filter((body) => body.data.payload.event_type === eventType);
      const [body] = await waitFor(
        () => Promise.resolve(bodies()),
        (found) => found.length === 1,
      );
      return body!;
    }
  });

  describe("event history", () => {
    it("a lead with 45 events keeps all 45, in Yelp's list order", async () => {
      const c = await connect();
      const events = makeEvents("h45", 45);
      yelpEvents.set("leadHistory45", events);
      await newEvent(c.business, "leadHistory45");
      await jobsDone(c.tenantId, 2);
      const view = await leadView(c.tenantId);
      expect(view.messages.map((message) => message.externalId)).toEqual(events.map((event) => event.id));
      const pages = yelp.received.filter((request) =>
        request.path.startsWith("/v3/leads/leadHistory45/events"),
      );
      expect(pages.length).toBeLessThanOrEqual(3);
    });

    it("runs of one lead at the same time store one history, in list order", async () => {
      const c = await connect();
      const events = makeEvents("par", 45);
      yelpEvents.set("leadParallel", events);
      await Promise.all([1, 2, 3].map(() => newEvent(c.business, "leadParallel")));
      await jobsDone(c.tenantId, 6);
      const view = await leadView(c.tenantId);
      expect(view.messages.map((message) => message.externalId)).toEqual(events.map((event) => event.id));
      const { rows } = await app.sql.query<{ positions: number }>(
        `SELECT count(DISTINCT m.position)::int AS positions FROM lead_messages m JOIN leads l ON l.id = m.lead_id
         WHERE l.tenant_id = $1`,
        [c.tenantId],
      );
      expect(rows).toEqual([{ positions: 45 }]);
    });

    it("orders by the list, not by time_created, also for events added by later runs", async () => {
      const c = await connect();
      // time_created runs backwards: the newest event looks the oldest.
      const events = makeEvents("ord", 3);
      yelpEvents.set("leadOrder", events);
      await newEvent(c.business, "leadOrder");
      await jobsDone(c.tenantId, 2);
      const more = [...events, ...makeEvents("ord", 2, 3)];
      yelpEvents.set("leadOrder", more);
      await newEvent(c.business, "leadOrder");
      await jobsDone(c.tenantId, 4);
      const view = await leadView(c.tenantId);
      expect(view.messages.map((message) => message.externalId)).toEqual(more.map((event) => event.id));
    });

    it("a history longer than one run's page bound is completed, in order, by the next event's run", async () => {
      const c = await connect();
      const events = makeEvents("big", 230, 0, true);
      yelpEvents.set("leadBig", events);
      await newEvent(c.business, "leadBig");
      await jobsDone(c.tenantId, 2);
      // One run reads at most 10 pages: the newest 200 events, a contiguous stretch of the list.
      const first = await leadView(c.tenantId);
      expect(first.messages.map((message) => message.externalId)).toEqual(
        events.slice(30).map((event) => event.id),
      );
      // The next event's run reads what is new and continues into the older history.
      const more = [...events, ...makeEvents("big", 5, 230, true)];
      yelpEvents.set("leadBig", more);
      await newEvent(c.business, "leadBig");
      await jobsDone(c.tenantId, 4);
      const second = await leadView(c.tenantId);
      expect(second.messages.map((message) => message.externalId)).toEqual(more.map((event) => event.id));
    });
  });
});
