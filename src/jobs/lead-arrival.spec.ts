// Which leads await a first response (the scope of lead.unanswered), and the arrival times recorded.
import { awaitsResponse, clampedUpdate, leadArrival } from "./lead-arrival.js";
import { firstResponseOf } from "./processors/initial-response.processor.js";

const received = new Date("2026-05-01T12:00:00Z");
const receipt = {
  provider: "yelp" as const,
  source: "webhook" as const,
  occurredAt: new Date("2026-05-01T11:59:00Z"),
  receivedAt: received,
  payload: {},
};

describe("awaitsResponse", () => {
  it("a fresh Yelp or Thumbtack lead by webhook or reconciliation", () => {
    expect(awaitsResponse(receipt, 3600)).toBe(true);
    expect(awaitsResponse({ ...receipt, provider: "thumbtack", source: "reconcile" }, 3600)).toBe(true);
  });

  it("never a backfill, Static Forms, a Thumbtack test webhook, or a lead older than the reply age", () => {
    expect(awaitsResponse({ ...receipt, source: "backfill" }, 3600)).toBe(false);
    expect(awaitsResponse({ ...receipt, provider: "staticforms" }, 3600)).toBe(false);
    expect(awaitsResponse({ ...receipt, provider: "thumbtack", payload: { test: true } }, 3600)).toBe(false);
    expect(awaitsResponse({ ...receipt, occurredAt: new Date("2026-05-01T10:59:59Z") }, 3600)).toBe(false);
  });
});

describe("leadArrival", () => {
  it("the provider's lead time where given, else the event's; never later than the receipt", () => {
    const created = new Date("2026-05-01T11:00:00Z");
    expect(leadArrival(receipt, { providerCreatedAt: created }, 3600)).toEqual({
      receivedAt: received,
      providerCreatedAt: created,
      awaitsResponse: true,
    });
    expect(leadArrival(receipt, {}, 3600).providerCreatedAt).toEqual(receipt.occurredAt);
    const future = new Date("2026-05-02T00:00:00Z");
    expect(leadArrival(receipt, { providerCreatedAt: future }, 3600).providerCreatedAt).toEqual(received);
  });
});

describe("clamped provider times", () => {
  const epoch = new Date(0);
  const future = new Date("9999-12-31T00:00:00Z");
  const oldest = new Date(received.getTime() - 400 * 86_400_000);

  it("a lead dated 1970 counts from 400 days before its receipt; one in the future from the receipt", () => {
    expect(leadArrival(receipt, { providerCreatedAt: epoch }, 3600).providerCreatedAt).toEqual(oldest);
    expect(leadArrival({ ...receipt, occurredAt: epoch }, {}, 3600).providerCreatedAt).toEqual(oldest);
    const inRange = new Date("2025-06-01T00:00:00Z");
    expect(leadArrival(receipt, { providerCreatedAt: inRange }, 3600).providerCreatedAt).toBe(inRange);
  });

  it("every time of an update: last event, messages, history, consent, creation, the business's answer", () => {
    const message = (sentAt: Date) => ({ externalId: "m", direction: "inbound" as const, sentAt });
    const clamped = clampedUpdate(
      {
        lastEventAt: future,
        messages: [message(epoch), message(future)],
        history: { runs: [{ messages: [message(epoch)] }], complete: true },
        phoneConsent: { granted: true, at: future },
        providerCreatedAt: epoch,
        businessAnsweredAt: future,
      },
      received,
    );
    expect(clamped).toEqual({
      lastEventAt: received,
      messages: [message(oldest), message(received)],
      history: { runs: [{ messages: [message(oldest)] }], complete: true },
      phoneConsent: { granted: true, at: received },
      providerCreatedAt: oldest,
      businessAnsweredAt: received,
    });
  });
});

describe("firstResponseOf", () => {
  const started = new Date("2026-05-01T12:00:05Z");
  it("ours when sent or found sent, at the attempt's start; the business's at its message's time", () => {
    expect(firstResponseOf({ status: "succeeded" }, started)).toEqual({ at: started, by: "auto" });
    expect(firstResponseOf({ status: "succeeded", ref: "reconciled" }, started)).toEqual({
      at: started,
      by: "auto",
    });
    const answeredAt = new Date("2026-05-01T12:00:01Z");
    expect(
      firstResponseOf({ status: "skipped", ref: "business_already_replied", answeredAt }, started),
    ).toEqual({ at: answeredAt, by: "business" });
    expect(firstResponseOf({ status: "skipped", ref: "business_already_replied" }, started)).toEqual({
      at: started,
      by: "business",
    });
  });

  it("nothing when no one answered", () => {
    expect(firstResponseOf({ status: "skipped", ref: "no_consumer_message" }, started)).toBeUndefined();
    expect(firstResponseOf({ status: "skipped", ref: "no_reply_channel" }, started)).toBeUndefined();
  });
});
