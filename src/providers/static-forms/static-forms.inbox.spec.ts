// The recorded Static Forms submissions (test/fixtures/staticforms), normalized as at ingest, become
// these lead updates; there is no reply channel.
import { readFileSync } from "node:fs";
import type { ProviderEvent } from "../provider-event.js";
import type { InboxEvent } from "../provider-inbox.js";
import { StaticFormsAdapter } from "./static-forms.adapter.js";
import { StaticFormsInbox, staticFormsLeadUpdate } from "./static-forms.inbox.js";

const received = (path: string): InboxEvent => {
  const body: unknown = JSON.parse(
    readFileSync(new URL(`../../../test/fixtures/staticforms/${path}`, import.meta.url), "utf8"),
  );
  const [event] = new StaticFormsAdapter().normalize(
    { rawBody: Buffer.alloc(0), body, headers: {}, query: {}, ip: "127.0.0.1" },
    { id: "c", externalAccountId: "sf-account", credentials: [] },
  );
  const { leadId, eventId, occurredAt, payload } = event as ProviderEvent;
  return { leadId, eventId: eventId ?? null, occurredAt, payload };
};

describe("Static Forms lead rules", () => {
  it("form-submitted.json: contact fields from the form, the rest kept, the message as the first inbound message", () => {
    const at = new Date(1776003725 * 1000);
    expect(staticFormsLeadUpdate(received("form-submitted.json"))).toEqual({
      profile: {
        contact: {
          name: "Lena Vasquez",
          email: "lena.v@example.test",
          phone: "+1 512 555 0142",
          message: "Need a quote for gutter cleaning, single story.",
        },
        details: { form: { subject: "Quote request" } },
      },
      lastEventAt: at,
      messages: [
        {
          externalId: "sub_9f3k2m7q1x",
          direction: "inbound",
          author: "Lena Vasquez",
          text: "Need a quote for gutter cleaning, single story.",
          sentAt: at,
        },
      ],
    });
  });

  it("legacy-flat.json: keyed by its content id", () => {
    const event = received("legacy-flat.json");
    const update = staticFormsLeadUpdate(event);
    expect(update.profile?.contact).toEqual({
      name: "Omar Reyes",
      email: "omar.r@example.test",
      message: "Do you service 78704?",
    });
    expect(update.lastEventAt).toEqual(new Date("2026-04-12T14:22:05Z"));
    expect(update.messages.map((message) => message.externalId)).toEqual([event.eventId]);
  });

  it("a form without a message field adds no message; a purged payload is permanent", () => {
    const event: InboxEvent = {
      leadId: "s1",
      eventId: "s1",
      occurredAt: new Date(0),
      payload: { formData: { name: "Ann" } },
    };
    expect(staticFormsLeadUpdate(event)).toMatchObject({
      profile: { contact: { name: "Ann" } },
      messages: [],
    });
    expect(() => staticFormsLeadUpdate({ ...event, payload: null })).toThrow(
      expect.objectContaining({ code: "payload_purged" }),
    );
  });

  it("never replies: no channel", async () => {
    const inbox = new StaticFormsInbox();
    await expect(inbox.reply()).resolves.toEqual({ status: "skipped", ref: "no_reply_channel" });
    await expect(
      inbox.leadUpdate({ ...received("form-submitted.json"), payload: null }),
    ).rejects.toMatchObject({ code: "payload_purged" });
  });
});
