// The recorded Thumbtack webhooks (test/fixtures/thumbtack), normalized as at ingest, become these lead
// updates; the reply is looked for before it is sent again.
import { readFileSync } from "node:fs";
import type { ProviderEvent } from "../provider-event.js";
import type { InboxEvent } from "../provider-inbox.js";
import { ThumbtackAdapter } from "./thumbtack.adapter.js";
import type { ThumbtackClient } from "./thumbtack.client.js";
import {
  isBusinessOwn,
  ThumbtackInbox,
  thumbtackHasOurReply,
  thumbtackLeadUpdate,
  thumbtackReplyDecision,
} from "./thumbtack.inbox.js";
import type { ThumbtackMessage } from "./thumbtack.schemas.js";

const received = (path: string): InboxEvent => {
  const body: unknown = JSON.parse(
    readFileSync(new URL(`../../../test/fixtures/thumbtack/${path}`, import.meta.url), "utf8"),
  );
  const [event] = new ThumbtackAdapter().normalize(
    { rawBody: Buffer.alloc(0), body, headers: {}, query: {}, ip: "127.0.0.1" },
    { id: "c", externalAccountId: "700000000000000404", credentials: [] },
  );
  const { leadId, eventId, occurredAt, payload } = event as ProviderEvent;
  return { leadId, eventId: eventId ?? null, occurredAt, payload };
};

const REPLY = "Thanks! We will be in touch shortly.";

describe("Thumbtack lead rules", () => {
  it("negotiation-created-v4.json: the customer's name and phone, the service, the request and price as details", () => {
    const update = thumbtackLeadUpdate(received("negotiation-created-v4.json"));
    expect(update.profile?.contact).toEqual({
      name: "Priya Okafor",
      firstName: "Priya",
      phone: "2065550117",
    });
    expect(update.profile?.service).toBe("Fence Repair"); // request.category.name
    expect(Object.keys(update.profile?.details ?? {}).sort()).toEqual([
      "estimate",
      "leadPrice",
      "request",
      "status",
    ]);
    expect(update.profile?.details).toMatchObject({ leadPrice: "$31.50", status: "Open" });
    expect(update.lastEventAt).toEqual(new Date("2026-04-02T15:20:01Z"));
    expect(update.messages).toEqual([]);
  });

  it("the docs variant and the legacy lead: displayName, name; the first word as first name; their category", () => {
    const variant = thumbtackLeadUpdate(received("negotiation-created-docs-variant.json")).profile;
    expect(variant?.contact).toEqual({ name: "Sam W.", firstName: "Sam" });
    expect(variant?.service).toBe("Fence Repair"); // category.name
    expect(thumbtackLeadUpdate(received("legacy-lead.json")).profile).toMatchObject({
      service: "House Cleaning", // the legacy request's category string
      contact: { name: "Dale Henning", firstName: "Dale", phone: "2085550199" },
      details: { leadPrice: "$18.00", request: { category: "House Cleaning" } },
    });
  });

  it("the webhook test payload keeps its test mark", () => {
    expect(thumbtackLeadUpdate(received("webhook-test-payload.json")).profile?.details).toMatchObject({
      test: true,
    });
  });

  it("a message adds one message and no contact data (the lead may be a placeholder)", () => {
    const customer = thumbtackLeadUpdate(received("message-created-v4-customer.json"));
    expect(customer).toEqual({
      lastEventAt: new Date("2026-04-02T15:24:38Z"),
      messages: [
        {
          externalId: "700000000000000707",
          direction: "inbound",
          author: "Priya O.",
          text: "Is Monday afternoon possible instead?",
          sentAt: new Date("2026-04-02T15:24:38Z"),
        },
      ],
    });
    expect(thumbtackLeadUpdate(received("message-created-v4-business.json")).messages).toMatchObject([
      { externalId: "700000000000000808", direction: "outbound", author: "Evergreen Deck & Fence" },
    ]);
  });

  it("a purged payload is permanent", () => {
    expect(() => thumbtackLeadUpdate({ ...received("legacy-lead.json"), payload: null })).toThrow(
      expect.objectContaining({ code: "payload_purged" }),
    );
  });

  it("finds our reply among the messages whatever the line endings", () => {
    const ours: ThumbtackMessage = { from: "Business", text: `  ${REPLY}\r\n` };
    expect(thumbtackHasOurReply([ours], REPLY)).toBe(true);
    expect(thumbtackHasOurReply([{ ...ours, from: "Customer" }], REPLY)).toBe(false);
    expect(thumbtackHasOurReply([{ from: "Business", text: null }, { from: "Business" }], REPLY)).toBe(false);
  });

  it("decides the first reply on the negotiation's messages", () => {
    const customer: ThumbtackMessage = { from: "Customer", text: "Two panels blew down." };
    const quickReply: ThumbtackMessage = { from: "Business", text: "Thanks for your request!" };
    const ours: ThumbtackMessage = { from: "Business", text: REPLY };
    expect(thumbtackReplyDecision([], REPLY, false)).toBe("send");
    expect(thumbtackReplyDecision([customer], REPLY, false)).toBe("send");
    expect(thumbtackReplyDecision([customer, quickReply], REPLY, false)).toBe("business_already_replied");
    expect(thumbtackReplyDecision([customer, ours], REPLY, true)).toBe("reconciled");
    expect(thumbtackReplyDecision([customer, quickReply], REPLY, true)).toBe("business_already_replied");
    expect(thumbtackReplyDecision([customer], REPLY, true)).toBe("send");
  });
});

describe("Thumbtack reply", () => {
  const client = (messages: ThumbtackMessage[]) => {
    const calls: string[] = [];
    const fake = {
      getMessages: (_token: string | undefined, id: string) => {
        calls.push(`GET ${id}`);
        return Promise.resolve(messages);
      },
      postMessage: (_token: string | undefined, id: string, text: string) => {
        calls.push(`POST ${id} ${text}`);
        return Promise.resolve();
      },
    };
    return { calls, inbox: new ThumbtackInbox(fake as unknown as ThumbtackClient) };
  };
  const request = { leadId: "n1", text: REPLY, token: "t" };

  it("looks at the negotiation first: sends when only the customer wrote, not when the business already did", async () => {
    const fresh = client([{ from: "Customer", text: "Hello?" }]);
    await expect(fresh.inbox.reply({ ...request, outcomeUnknown: false })).resolves.toEqual({
      status: "succeeded",
    });
    expect(fresh.calls).toEqual(["GET n1", `POST n1 ${REPLY}`]);
    const answered = client([{ from: "Business", text: "Hi! I can come by tomorrow." }]);
    await expect(answered.inbox.reply({ ...request, outcomeUnknown: false })).resolves.toEqual({
      status: "skipped",
      ref: "business_already_replied",
    });
    expect(answered.calls).toEqual(["GET n1"]);
  });

  it("after an unknown outcome: reconciled when our message is there, sent when it is not", async () => {
    const found = client([{ from: "Business", text: REPLY }]);
    await expect(found.inbox.reply({ ...request, outcomeUnknown: true })).resolves.toEqual({
      status: "succeeded",
      ref: "reconciled",
    });
    expect(found.calls).toEqual(["GET n1"]);
    const missing = client([{ from: "Customer", text: "Hello?" }]);
    await expect(missing.inbox.reply({ ...request, outcomeUnknown: true })).resolves.toEqual({
      status: "succeeded",
    });
    expect(missing.calls).toEqual(["GET n1", `POST n1 ${REPLY}`]);
  });
});

describe("Thumbtack: who answered", () => {
  const ours = { text: REPLY, at: new Date("2026-04-02T15:21:00Z") };

  it("a Business message but the one Leadgate posted is the business's, the quick reply included", () => {
    expect(isBusinessOwn({ from: "Business", text: "Monday 2pm works." }, ours)).toBe(true);
    expect(isBusinessOwn({ from: "Business", text: "Thanks for reaching out! (quick reply)" }, null)).toBe(
      true,
    );
    expect(isBusinessOwn({ from: "Business", text: `${REPLY}\r\n` }, ours)).toBe(false);
    expect(isBusinessOwn({ from: "Customer", text: "Hello?" }, ours)).toBe(false);
  });

  it("message-created-v4-business.json: answered at its sentAt; the customer's message answers nothing", () => {
    const business = thumbtackLeadUpdate(received("message-created-v4-business.json"), ours);
    expect(business.businessAnsweredAt).toEqual(new Date("2026-04-02T15:31:00Z"));
    const customer = thumbtackLeadUpdate(received("message-created-v4-customer.json"), ours);
    expect(customer.businessAnsweredAt).toBeUndefined();
  });

  it("our own reply arriving by webhook is not the business's", () => {
    const event = received("message-created-v4-business.json");
    const own = thumbtackLeadUpdate(event, { text: "Monday 2pm works.\nSee you then.", at: ours.at });
    expect(own.businessAnsweredAt).toBeUndefined();
  });

  it("the reply skipped because the business wrote names the earliest Business sentAt", async () => {
    const fake = {
      getMessages: () =>
        Promise.resolve([
          { from: "Customer", text: "Hello?", sentAt: "2026-04-02T15:20:00Z" },
          { from: "Business", text: "Later", sentAt: "2026-04-02T15:40:00Z" },
          { from: "Business", text: "Quick reply", sentAt: "2026-04-02T15:20:30Z" },
        ]),
    };
    const inbox = new ThumbtackInbox(fake as unknown as ThumbtackClient);
    await expect(
      inbox.reply({ leadId: "n1", text: REPLY, token: "t", outcomeUnknown: false }),
    ).resolves.toEqual({
      status: "skipped",
      ref: "business_already_replied",
      answeredAt: new Date("2026-04-02T15:20:30Z"),
    });
  });
});
