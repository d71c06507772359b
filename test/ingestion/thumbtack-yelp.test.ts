// Thumbtack and Yelp over HTTP against the real API, Postgres and Redis.
import { OPERATOR_KEY } from "../support/admin.js";
import { storedFor } from "../support/database.js";
import { useApp } from "../support/harness.js";
import type { TestConnection } from "../support/tenants.js";
import { fixture } from "../support/fixtures.js";
import { get, post } from "../support/http.js";

const YELP_TOKEN = "yelp-platform-token-0123456789";
const YELP_BUSINESS = "tEstBiz_Kx9Lm2Qp7Rs4Vw";
const AUTO_REPLY = { autoResponse: { enabled: true, text: "Thanks, we will call you shortly." } };

const basicAuth = (secrets: Record<string, string>) => ({
  authorization: `Basic ${Buffer.from(`${secrets.username}:${secrets.password}`).toString("base64")}`,
});

describe("Thumbtack and Yelp webhooks", () => {
  const app = useApp({
    env: { YELP_WEBHOOK_TOKEN: YELP_TOKEN, LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY },
  });

  const jobsOf = async (tenantId: string) =>
    (
      await app.sql.query<{ operation: string }>(
        "SELECT operation FROM jobs WHERE tenant_id = $1 ORDER BY operation",
        [tenantId],
      )
    ).rows.map((row) => row.operation);

  describe("POST /webhooks/thumbtack/{connectionId}", () => {
    let thumbtack: TestConnection;
    let url: string;
    beforeAll(async () => {
      thumbtack = await app.createConnection({
        provider: "thumbtack",
        externalAccountId: "700000000000000404",
        inboundAuth: { type: "basic" },
        settings: AUTO_REPLY,
      });
      url = `${app.url}/webhooks/thumbtack/${thumbtack.connectionId}`;
    });

    it.each([
      "negotiation-created-v4.json",
      "negotiation-created-docs-variant.json",
      "message-created-v4-customer.json",
      "message-created-v4-business.json",
      "legacy-lead.json",
      "webhook-test-payload.json",
    ])("%s: 202, then 200 duplicate", async (name) => {
      const body = fixture(`thumbtack/${name}`).text;
      const first = await post(url, body, basicAuth(thumbtack.secrets));
      expect(first.status).toBe(202);
      const again = await post(url, body, basicAuth(thumbtack.secrets));
      expect(again.status).toBe(200);
      expect(again.body).toEqual({ accepted: true, duplicate: true, receiptIds: first.body.receiptIds });
    });

    it("negotiation and customer message of one lead: two receipts, one initial-response; none for our own message or the test payload", async () => {
      const { rows } = await app.sql.query<{ lead_id: string; kind: string; jobs: string[] }>(
        `SELECT r.lead_id, r.kind, array_agg(j.operation ORDER BY j.operation) FILTER (WHERE j.id IS NOT NULL) AS jobs
         FROM receipts r LEFT JOIN jobs j ON j.receipt_id = r.id WHERE r.tenant_id = $1 GROUP BY r.id ORDER BY r.received_at`,
        [thumbtack.tenantId],
      );
      const lead202 = rows.filter((row) => row.lead_id === "700000000000000202");
      expect(lead202.map((row) => row.kind)).toEqual(["lead.created", "lead.replied", "lead.updated"]);
      const initialResponses = await app.sql.query(
        "SELECT r.lead_id FROM jobs j JOIN receipts r ON r.id = j.receipt_id WHERE j.tenant_id = $1 AND j.operation = 'initial-response'",
        [thumbtack.tenantId],
      );
      // 202 (negotiation + customer message: one), 909 (docs variant); not the legacy lead, not the test payload.
      expect(initialResponses.rows.map((row: { lead_id: string }) => row.lead_id).sort()).toEqual([
        "700000000000000202",
        "700000000000000909",
      ]);
    });

    it.each(["..", ".", "700/../../businesses"])(
      "a negotiation id of %j would change the provider URL: 400 invalid_envelope, nothing written",
      async (negotiationId) => {
        const body = fixture("thumbtack/negotiation-created-v4.json").json as { data: object };
        const before = await storedFor(app.sql, thumbtack.tenantId);
        const answer = await post(
          url,
          { ...body, data: { ...body.data, negotiationID: negotiationId } },
          basicAuth(thumbtack.secrets),
        );
        expect(answer.status).toBe(400);
        expect(answer.body.error).toBe("invalid_envelope");
        expect(await storedFor(app.sql, thumbtack.tenantId)).toEqual(before);
      },
    );

    it("token auth (a self-serve webhook created without auth): the ?token= of the webhook URL, 401 otherwise with nothing written", async () => {
      const created = await app.operator.post("/admin/connections", {
        tenantId: thumbtack.tenantId,
        provider: "thumbtack",
        externalAccountId: "700000000000000777",
        displayName: "Self-serve webhook",
        inboundAuth: { type: "token" },
      });
      expect(created.status).toBe(201);
      const token: string = created.body.secrets.token;
      expect(created.body.webhookUrl).toMatch(
        new RegExp(`/webhooks/thumbtack/${created.body.connection.id}\\?token=${token}$`),
      );
      const tokenUrl = `${app.url}/webhooks/thumbtack/${created.body.connection.id}`;
      const body = fixture("thumbtack/negotiation-created-v4.json").json as { data: object };
      const event = { ...body, data: { ...body.data, negotiationID: "700000000000000778" } };
      const before = await storedFor(app.sql, thumbtack.tenantId);
      expect((await post(tokenUrl, event)).status).toBe(401);
      expect((await post(`${tokenUrl}?token=not-the-token`, event)).status).toBe(401);
      expect(await storedFor(app.sql, thumbtack.tenantId)).toEqual(before);
      expect((await post(`${tokenUrl}?token=${token}`, event)).status).toBe(202);
    });

    it("custom header auth: the configured header, 401 otherwise with nothing written", async () => {
      const header = await app.createConnection({
        provider: "thumbtack",
        inboundAuth: { type: "header", headerName: "X-Thumbtack-Secret" },
      });
      const headerUrl = `${app.url}/webhooks/thumbtack/${header.connectionId}`;
      const body = fixture("thumbtack/negotiation-created-v4.json").text;
      expect((await post(headerUrl, body, { "x-thumbtack-secret": "wrong" })).status).toBe(401);
      expect((await post(headerUrl, body)).status).toBe(401);
      expect(await storedFor(app.sql, header.tenantId)).toEqual({ receipts: 0, jobs: 0, conflicts: 0 });
      expect(
        (await post(headerUrl, body, { "x-thumbtack-secret": header.secrets.headerValue! })).status,
      ).toBe(202);
    });

    it("401 for the fixture's own (wrong) credentials; 400 for an unknown shape; nothing written", async () => {
      const connection = await app.createConnection({
        provider: "thumbtack",
        inboundAuth: { type: "basic" },
      });
      const connectionUrl = `${app.url}/webhooks/thumbtack/${connection.connectionId}`;
      const body = fixture("thumbtack/negotiation-created-v4.json").text;
      const wrong = await post(connectionUrl, body, { authorization: "Basic bGVhZGh1Yjp0ZXN0LXNlY3JldA==" });
      expect(wrong.status).toBe(401);
      const shape = await post(connectionUrl, { hello: "world" }, basicAuth(connection.secrets));
      expect(shape.status).toBe(400);
      expect(shape.body.error).toBe("invalid_envelope");
      expect(await storedFor(app.sql, connection.tenantId)).toEqual({ receipts: 0, jobs: 0, conflicts: 0 });
    });

    it("an unknown v4 event type: 200 ignored, receipt kept, no jobs", async () => {
      const connection = await app.createConnection({
        provider: "thumbtack",
        inboundAuth: { type: "basic" },
      });
      const answer = await post(
        `${app.url}/webhooks/thumbtack/${connection.connectionId}`,
        { event: { eventType: "ReviewCreatedV4", webhookID: "1" }, data: { reviewID: "r-1", rating: 5 } },
        basicAuth(connection.secrets),
      );
      expect(answer.status).toBe(200);
      expect(answer.body).toMatchObject({ accepted: true, ignored: true });
      expect(await storedFor(app.sql, connection.tenantId)).toEqual({ receipts: 1, jobs: 0, conflicts: 0 });
    });
  });

  describe("Yelp", () => {
    let yelp: TestConnection;
    const yelpUrl = (token = YELP_TOKEN) => `${app.url}/webhooks/yelp/${token}`;
    beforeAll(async () => {
      yelp = await app.createConnection({
        provider: "yelp",
        externalAccountId: YELP_BUSINESS,
        inboundAuth: { type: "none" },
        settings: AUTO_REPLY,
      });
    });

    it("GET handshake echoes the verification value", async () => {
      const answer = await get(`${yelpUrl()}?verification=Qz7Lm2Pw9Xk4`);
      expect(answer.status).toBe(200);
      expect(answer.headers.get("content-type")).toMatch(/^application\/json/);
      expect(answer.body).toEqual({ verification: "Qz7Lm2Pw9Xk4" });
    });

    it.each(["a%20b", "x".repeat(257), ""])("GET handshake: 400 for verification=%s", async (value) => {
      const answer = await get(`${yelpUrl()}?verification=${value}`);
      expect(answer.status).toBe(400);
    });

    it("GET handshake: 401 for a wrong token", async () => {
      expect((await get(`${yelpUrl("wrong-token")}?verification=abc`)).status).toBe(401);
    });

    it.each(["new-event.json", "phone-opt-in.json", "phone-opt-out.json", "phone-available.json"])(
      "%s: 202, then 200 duplicate",
      async (name) => {
        const body = fixture(`yelp/${name}`).text;
        const first = await post(yelpUrl(), body);
        expect(first.status).toBe(202);
        const again = await post(yelpUrl(), body);
        expect(again.status).toBe(200);
        expect(again.body.receiptIds).toEqual(first.body.receiptIds);
      },
    );

    it("phone events use the fallback key: same lead and type at another time is a new event", async () => {
      const body = fixture("yelp/phone-opt-in.json").json;
      const later = await post(yelpUrl(), { ...body, time: "2026-03-20T10:00:00+00:00" });
      expect(later.status).toBe(202);
    });

    it("two NEW_EVENTs of one lead (fanned out of one delivery): two receipts, one initial-response", async () => {
      const connection = await app.createConnection({
        provider: "yelp",
        externalAccountId: "fanOutBiz_0000000000001",
        inboundAuth: { type: "none" },
        settings: AUTO_REPLY,
      });
      const update = (eventId: string) => ({
        event_type: "NEW_EVENT",
        event_id: eventId,
        lead_id: "fanLead1",
        interaction_time: "2026-03-14T16:05:39+00:00",
      });
      const answer = await post(yelpUrl(), {
        time: "2026-03-14T16:05:42+00:00",
        object: "business",
        data: { id: "fanOutBiz_0000000000001", updates: [update("fanEv1"), update("fanEv2")] },
      });
      expect(answer.status).toBe(202);
      expect(answer.body.receiptIds).toHaveLength(2);
      expect(await jobsOf(connection.tenantId)).toEqual(["initial-response", "lead-upsert", "lead-upsert"]);
    });

    it("the same update twice in one delivery is one event", async () => {
      const body = fixture("yelp/new-event.json").json as { data: { updates: object[] } };
      const update = { event_type: "NEW_EVENT", event_id: "twiceEv", lead_id: "twiceLead" };
      const answer = await post(yelpUrl(), { ...body, data: { ...body.data, updates: [update, update] } });
      expect(answer.status).toBe(202);
      expect(answer.body.receiptIds).toHaveLength(2);
      expect(answer.body.receiptIds[0]).toEqual(answer.body.receiptIds[1]);
      const { rows } = await app.sql.query(
        "SELECT count(*)::int AS n FROM receipts WHERE event_id = 'twiceEv'",
      );
      expect(rows).toEqual([{ n: 1 }]);
    });

    it.each([".", "..", "a/b", "../../v3/businesses", "x\\y"])(
      "a lead id of %j would change the provider URL: 400 invalid_envelope, nothing written",
      async (leadId) => {
        const before = await storedFor(app.sql, yelp.tenantId);
        const answer = await post(yelpUrl(), {
          time: "2026-03-14T16:05:42+00:00",
          object: "business",
          data: {
            id: YELP_BUSINESS,
            updates: [{ event_type: "NEW_EVENT", event_id: `pathEv-${leadId}`, lead_id: leadId }],
          },
        });
        expect(answer.status).toBe(400);
        expect(answer.body.error).toBe("invalid_envelope");
        expect(await storedFor(app.sql, yelp.tenantId)).toEqual(before);
      },
    );

    it("401 for a wrong token, 404 for an unknown business, 400 for a wrong envelope; nothing written", async () => {
      const body = fixture("yelp/new-event.json").json as { data: object };
      const before = await storedFor(app.sql, yelp.tenantId);
      expect((await post(yelpUrl("not-the-token"), body)).status).toBe(401);
      const unknown = await post(yelpUrl(), { ...body, data: { ...body.data, id: "someOtherBusiness" } });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error).toBe("unknown_connection");
      const envelope = await post(yelpUrl(), { ...body, data: { ...body.data, updates: "nope" } });
      expect(envelope.status).toBe(400);
      expect(envelope.body.error).toBe("invalid_envelope");
      expect(await storedFor(app.sql, yelp.tenantId)).toEqual(before);
    });
  });

  it("Yelp's IP allowlist refuses other senders", async () => {
    const guarded = await app.startApi({ YELP_ALLOWED_IPS: "52.35.20.1" });
    try {
      const answer = await post(
        `${guarded.url}/webhooks/yelp/${YELP_TOKEN}`,
        fixture("yelp/new-event.json").text,
      );
      expect(answer.status).toBe(401);
      // X-Forwarded-For is not believed unless TRUST_PROXY says so.
      const spoofed = await post(
        `${guarded.url}/webhooks/yelp/${YELP_TOKEN}`,
        fixture("yelp/new-event.json").text,
        {
          "x-forwarded-for": "52.35.20.1",
        },
      );
      expect(spoofed.status).toBe(401);
    } finally {
      await guarded.close();
    }
  });

  it("Yelp deliveries are refused when no YELP_WEBHOOK_TOKEN is configured", async () => {
    const tokenless = await app.startApi({ YELP_WEBHOOK_TOKEN: "" }); // an empty value is unset
    try {
      expect(
        (await post(`${tokenless.url}/webhooks/yelp/anything`, fixture("yelp/new-event.json").text)).status,
      ).toBe(401);
    } finally {
      await tokenless.close();
    }
  });
});
