import type { ProviderEvent } from "../providers/provider-event.js";
import { idempotencyKey, identityOf, leadScopeKey, payloadDigest } from "./idempotency-key.js";

const event = (overrides: Partial<ProviderEvent> = {}): ProviderEvent => ({
  provider: "yelp",
  accountId: "biz-1",
  eventId: "ev-1",
  leadId: "lead-1",
  kind: "lead.updated",
  providerType: "NEW_EVENT",
  occurredAt: new Date("2026-03-14T16:05:39Z"),
  mayStartConversation: true,
  payload: { a: 1, b: { c: 2, d: 3 } },
  ...overrides,
});

describe("idempotencyKey", () => {
  it("is a sha256 hex of the scoped identity", () => {
    expect(idempotencyKey(event())).toMatch(/^[0-9a-f]{64}$/);
    expect(identityOf(event())).toEqual(["yelp", "biz-1", "provider-event", "ev-1"]);
  });

  it("encodes the tuple unambiguously", () => {
    const a = event({ accountId: "a:b", eventId: "c" });
    const b = event({ accountId: "a", eventId: "b:c" });
    expect(idempotencyKey(a)).not.toEqual(idempotencyKey(b));
  });

  it("scopes the key by provider and account", () => {
    expect(idempotencyKey(event())).not.toEqual(idempotencyKey(event({ accountId: "biz-2" })));
    expect(idempotencyKey(event())).not.toEqual(idempotencyKey(event({ provider: "thumbtack" })));
  });

  it("falls back to [lead-event, leadId, type, version] without an event id", () => {
    const phone = event({
      eventId: undefined,
      providerType: "CONSUMER_PHONE_NUMBER_OPT_IN_EVENT",
      version: "t1",
    });
    expect(identityOf(phone)).toEqual([
      "yelp",
      "biz-1",
      "lead-event",
      "lead-1",
      "CONSUMER_PHONE_NUMBER_OPT_IN_EVENT",
      "t1",
    ]);
    expect(idempotencyKey(phone)).not.toEqual(idempotencyKey({ ...phone, version: "t2" }));
    expect(idempotencyKey(phone)).not.toEqual(
      idempotencyKey({ ...phone, providerType: "CONSUMER_PHONE_NUMBER_OPT_OUT_EVENT" }),
    );
  });

  it("ignores everything that is not identity (delivery time, payload)", () => {
    const retry = event({ occurredAt: new Date(), payload: { other: true } });
    expect(idempotencyKey(retry)).toEqual(idempotencyKey(event()));
  });
});

describe("payloadDigest", () => {
  it("is the same for a byte-different copy of the same event", () => {
    const reordered = event({ payload: { b: { d: 3, c: 2 }, a: 1 }, occurredAt: new Date() });
    expect(payloadDigest(reordered)).toEqual(payloadDigest(event()));
  });

  it("is the digest stored receipts already hold (unchanged across releases)", () => {
    // Pinned from the release before canonical JSON went through JSON.stringify: a changed digest
    // would make every retry of an event stored before an upgrade a payload conflict.
    expect(payloadDigest(event())).toBe("044cf1b2e5d4d7681ef67bf488c3371560addc3dad24001e0d726a2876fab863");
    expect(
      payloadDigest(event({ eventId: undefined, payload: { "10": [{ z: 1, y: null }], é: "x", A: true } })),
    ).toBe("7ac72538b91da040bfe92c0cd828a129d317ffb5b730e6c4ac46d75cb25be36f");
  });

  it("changes with the content", () => {
    expect(payloadDigest(event({ payload: { a: 2, b: { c: 2, d: 3 } } }))).not.toEqual(
      payloadDigest(event()),
    );
  });
});

describe("leadScopeKey", () => {
  it("is one key per lead, whatever the event", () => {
    expect(leadScopeKey(event())).toEqual(leadScopeKey(event({ eventId: "ev-2", kind: "lead.replied" })));
    expect(leadScopeKey(event())).not.toEqual(leadScopeKey(event({ leadId: "lead-2" })));
    expect(leadScopeKey(event())).not.toEqual(idempotencyKey(event()));
  });
});
