// Every recorded fixture (test/fixtures, copied from ../shared/fixtures) normalizes to the expected events.
import { readFileSync } from "node:fs";
import { yelpConfig } from "./yelp/yelp.config.js";
import { idempotencyKey, payloadDigest } from "../ingestion/idempotency-key.js";
import type { ConnectionForIngest, InboundDelivery } from "./provider-adapter.js";
import { StaticFormsAdapter } from "./static-forms/static-forms.adapter.js";
import { ThumbtackAdapter } from "./thumbtack/thumbtack.adapter.js";
import { YelpAdapter } from "./yelp/yelp.adapter.js";

const read = (path: string): unknown =>
  JSON.parse(readFileSync(new URL(`../../test/fixtures/${path}`, import.meta.url), "utf8"));

const delivery = (body: unknown, headers: Record<string, string> = {}): InboundDelivery => ({
  rawBody: Buffer.from(JSON.stringify(body)),
  body,
  headers,
  query: {},
  ip: "127.0.0.1",
});

const connection = (externalAccountId: string): ConnectionForIngest => ({
  id: "c",
  externalAccountId,
  credentials: [],
});

const errorCode = (run: () => unknown): string | undefined => {
  try {
    run();
  } catch (error) {
    return (error as { code?: string }).code;
  }
  return undefined;
};

describe("Static Forms adapter", () => {
  const adapter = new StaticFormsAdapter();
  const account = connection("sf-account");

  it("normalizes form.submitted into one lead.created, without the apiKey", () => {
    const [event, ...rest] = adapter.normalize(
      delivery(
        read("staticforms/form-submitted.json"),
        read("staticforms/form-submitted.headers.json") as Record<string, string>,
      ),
      account,
    );
    expect(rest).toEqual([]);
    expect(event).toEqual({
      provider: "staticforms",
      accountId: "sf-account",
      eventId: "sub_9f3k2m7q1x",
      leadId: "sub_9f3k2m7q1x",
      kind: "lead.created",
      providerType: "form.submitted",
      occurredAt: new Date(1776003725 * 1000),
      mayStartConversation: false,
      payload: {
        event: "form.submitted",
        submissionId: "sub_9f3k2m7q1x",
        formData: {
          name: "Lena Vasquez",
          email: "lena.v@example.test",
          phone: "+1 512 555 0142",
          subject: "Quote request",
          message: "Need a quote for gutter cleaning, single story.",
        },
        recipientEmail: "leads@roofco.example.test",
        replyTo: "lena.v@example.test",
        attachments: [],
      },
    });
    expect(JSON.stringify(event)).not.toContain("sf_test_0a1b2c3d4e5f");
  });

  it("identifies the legacy flat body by a hash of its content", () => {
    const body = read("staticforms/legacy-flat.json") as Record<string, unknown>;
    const [event] = adapter.normalize(delivery(body), account);
    expect(event).toMatchObject({
      kind: "lead.created",
      providerType: "form.submitted",
      occurredAt: new Date("2026-04-12T14:22:05Z"),
      payload: {
        formData: { name: "Omar Reyes", email: "omar.r@example.test", message: "Do you service 78704?" },
      },
    });
    expect(event?.eventId).toMatch(/^legacy-[0-9a-f]{64}$/);
    expect(JSON.stringify(event)).not.toContain("sf_test_0a1b2c3d4e5f");
    const [reordered] = adapter.normalize(
      delivery(Object.fromEntries(Object.entries(body).reverse())),
      account,
    );
    expect(reordered?.eventId).toEqual(event?.eventId);
    const [other] = adapter.normalize(delivery({ ...body, formData: { name: "Someone else" } }), account);
    expect(other?.eventId).not.toEqual(event?.eventId);
  });

  it("checks the Idempotency-Key header against the body (quotes stripped)", () => {
    const body = read("staticforms/form-submitted.json");
    const withKey = (key: string) => delivery(body, { "idempotency-key": key });
    expect(adapter.normalize(withKey('"staticforms:form.submitted:sub_9f3k2m7q1x"'), account)).toHaveLength(
      1,
    );
    expect(errorCode(() => adapter.normalize(withKey("staticforms:form.submitted:sub_other"), account))).toBe(
      "idempotency_key_mismatch",
    );
  });

  it("marks other event types ignored and rejects wrong envelopes", () => {
    const [event] = adapter.normalize(
      delivery({ event: "form.viewed", data: { submissionId: "s1" } }),
      account,
    );
    expect(event?.kind).toBe("ignored");
    const [submitted] = adapter.normalize(
      delivery({ event: "form.submitted", data: { submissionId: "s1", formData: {} } }),
      account,
    );
    expect(idempotencyKey(event!)).not.toEqual(idempotencyKey(submitted!));
    expect(errorCode(() => adapter.normalize(delivery([1, 2]), account))).toBe("invalid_envelope");
    expect(errorCode(() => adapter.normalize(delivery({ event: "form.submitted", data: {} }), account))).toBe(
      "invalid_envelope",
    );
    expect(
      errorCode(() => adapter.normalize(delivery({ event: 5, data: { submissionId: "s" } }), account)),
    ).toBe("invalid_envelope");
    expect(errorCode(() => adapter.normalize(delivery({ apiKey: "k" }), account))).toBe("invalid_envelope");
  });
});

describe("Thumbtack adapter", () => {
  const adapter = new ThumbtackAdapter();
  const account = connection("700000000000000404");
  const normalize = (path: string) => adapter.normalize(delivery(read(`thumbtack/${path}`)), account);

  it("NegotiationCreatedV4: a lead.created keyed by negotiationID that may start a conversation", () => {
    const [event] = normalize("negotiation-created-v4.json");
    expect(event).toMatchObject({
      provider: "thumbtack",
      accountId: "700000000000000404",
      eventId: "700000000000000202",
      leadId: "700000000000000202",
      kind: "lead.created",
      providerType: "NegotiationCreatedV4",
      occurredAt: new Date("2026-04-02T15:20:01Z"),
      mayStartConversation: true,
      payload: { customer: { firstName: "Priya", lastName: "Okafor" } },
    });
  });

  it("accepts the docs variant (createTime, displayName)", () => {
    const [event] = normalize("negotiation-created-docs-variant.json");
    expect(event).toMatchObject({
      eventId: "700000000000000909",
      kind: "lead.created",
      occurredAt: new Date("2026-04-03T10:00:01Z"),
      mayStartConversation: true,
    });
  });

  it("recognises the webhook test payload and never lets it start a conversation", () => {
    const [event] = normalize("webhook-test-payload.json");
    expect(event).toMatchObject({
      kind: "lead.created",
      mayStartConversation: false,
      payload: { test: true },
    });
  });

  it("MessageCreatedV4: keyed by messageID; customer replies, business updates", () => {
    const [customer] = normalize("message-created-v4-customer.json");
    const [business] = normalize("message-created-v4-business.json");
    expect(customer).toMatchObject({
      eventId: "700000000000000707",
      leadId: "700000000000000202",
      kind: "lead.replied",
      occurredAt: new Date("2026-04-02T15:24:38Z"),
      mayStartConversation: true,
    });
    expect(business).toMatchObject({
      eventId: "700000000000000808",
      leadId: "700000000000000202",
      kind: "lead.updated",
      mayStartConversation: false,
      payload: { text: "Monday 2pm works.\r\nSee you then." },
    });
  });

  it("the legacy lead shape", () => {
    const [event] = normalize("legacy-lead.json");
    expect(event).toMatchObject({
      eventId: "611111111111111111",
      leadId: "611111111111111111",
      kind: "lead.created",
      occurredAt: new Date(1775143201 * 1000),
    });
  });

  it("matches event types case-insensitively (and the docs' typo); ignores unknown ones", () => {
    const body = read("thumbtack/negotiation-created-v4.json") as { event: object; data: object };
    const typo = adapter.normalize(
      delivery({ ...body, event: { ...body.event, eventType: "NegotationCreatedV4" } }),
      account,
    );
    expect(typo[0]?.kind).toBe("lead.created");
    const review = adapter.normalize(
      delivery({ event: { eventType: "ReviewCreatedV4" }, data: { reviewID: "r1" } }),
      account,
    );
    expect(review[0]).toMatchObject({ kind: "ignored", mayStartConversation: false });
    expect(review[0]?.version).toMatch(/^[0-9a-f]{64}$/);
    expect(errorCode(() => adapter.normalize(delivery({ hello: "world" }), account))).toBe(
      "invalid_envelope",
    );
    expect(
      errorCode(() =>
        adapter.normalize(
          delivery({ event: { eventType: "MessageCreatedV4" }, data: { negotiationID: "1" } }),
          account,
        ),
      ),
    ).toBe("invalid_envelope");
  });
});

describe("Yelp adapter", () => {
  const adapter = new YelpAdapter(
    yelpConfig({ YELP_WEBHOOK_TOKEN: "yelp-token-0123456789", YELP_ALLOWED_IPS: "52.35.20.1,127.0.0.1" }),
  );
  const account = connection("tEstBiz_Kx9Lm2Qp7Rs4Vw");
  const normalize = (path: string) => adapter.normalize(delivery(read(`yelp/${path}`)), account);

  it("NEW_EVENT: keyed by event_id, may start a conversation", () => {
    expect(normalize("new-event.json")).toEqual([
      {
        provider: "yelp",
        accountId: "tEstBiz_Kx9Lm2Qp7Rs4Vw",
        eventId: "evT0kQ3nR8sLw2Zy5Hc1Aa",
        leadId: "lEad7Pq2Wx9Mn4Bv6Ct8Dd",
        kind: "lead.updated",
        providerType: "NEW_EVENT",
        occurredAt: new Date("2026-03-14T16:05:39Z"),
        mayStartConversation: true,
        payload: {
          event_type: "NEW_EVENT",
          event_id: "evT0kQ3nR8sLw2Zy5Hc1Aa",
          lead_id: "lEad7Pq2Wx9Mn4Bv6Ct8Dd",
          interaction_time: "2026-03-14T16:05:39+00:00",
        },
      },
    ]);
  });

  it.each([
    ["phone-opt-in.json", "CONSUMER_PHONE_NUMBER_OPT_IN_EVENT", "2026-03-14T16:09:03+00:00"],
    ["phone-opt-out.json", "CONSUMER_PHONE_NUMBER_OPT_OUT_EVENT", "2026-03-14T18:41:10+00:00"],
    ["phone-available.json", "CONSUMER_PHONE_NUMBER_AVAILABLE_EVENT", "2026-03-15T09:12:00+00:00"],
  ])("%s: no event id, fallback version = time", (path, type, time) => {
    const [event] = normalize(path);
    expect(event).not.toHaveProperty("eventId");
    expect(event).toMatchObject({
      leadId: "lEad7Pq2Wx9Mn4Bv6Ct8Dd",
      kind: "lead.updated",
      providerType: type,
      version: time,
      mayStartConversation: false,
    });
  });

  it("a NEW_EVENT retried with another processing time is the same event with the same digest", () => {
    const body = read("yelp/new-event.json") as Record<string, unknown>;
    const [first] = adapter.normalize(delivery(body), account);
    const [retry] = adapter.normalize(delivery({ ...body, time: "2026-03-14T16:09:00+00:00" }), account);
    expect(payloadDigest(retry!)).toEqual(payloadDigest(first!));
    expect(idempotencyKey(retry!)).toEqual(idempotencyKey(first!));
  });

  it("fans out updates[] and routes by data.id", () => {
    const body = read("yelp/new-event.json") as { data: { updates: object[] } };
    const two = {
      ...body,
      data: {
        ...body.data,
        updates: [...body.data.updates, { event_type: "NEW_EVENT", event_id: "ev2", lead_id: "l2" }],
      },
    };
    expect(adapter.normalize(delivery(two), account).map((event) => event.eventId)).toEqual([
      "evT0kQ3nR8sLw2Zy5Hc1Aa",
      "ev2",
    ]);
    expect(adapter.accountIdOf(delivery(two))).toBe("tEstBiz_Kx9Lm2Qp7Rs4Vw");
    expect(
      errorCode(() => adapter.normalize(delivery({ ...body, data: { id: "b", updates: [] } }), account)),
    ).toBe("invalid_envelope");
    expect(errorCode(() => adapter.accountIdOf(delivery({ data: {} })))).toBe("invalid_envelope");
  });

  it("checks the URL token and the IP allowlist", () => {
    expect(() => adapter.verifyPlatform("yelp-token-0123456789", "::ffff:127.0.0.1")).not.toThrow();
    expect(errorCode(() => adapter.verifyPlatform("yelp-token-wrong", "127.0.0.1"))).toBe("unauthorized");
    expect(errorCode(() => adapter.verifyPlatform("yelp-token-0123456789", "10.0.0.1"))).toBe("unauthorized");
  });

  it("answers the handshake only for 1 to 256 letters or digits", () => {
    expect(adapter.verification("Qz7Lm2Pw9Xk4")).toBe("Qz7Lm2Pw9Xk4");
    expect(errorCode(() => adapter.verification("a b"))).toBe("invalid_verification");
    expect(errorCode(() => adapter.verification("x".repeat(257)))).toBe("invalid_verification");
    expect(errorCode(() => adapter.verification(undefined))).toBe("invalid_verification");
  });
});
