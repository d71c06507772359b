// Yelp's recorded API answers (test/fixtures/yelp), checked by the client's schemas, become this lead
// update; the reply is never sent once the business wrote, and not twice after an unknown outcome.
import { readFileSync } from "node:fs";
import { checkAnswer } from "../../common/outbound/answer-schema.js";
import type { YelpClient } from "./yelp.client.js";
import { YelpInbox, yelpLeadUpdate, yelpReplyDecision } from "./yelp.inbox.js";
import { YelpEvent, YelpEvents, YelpLead } from "./yelp.schemas.js";

const answer = <T extends object>(schema: new () => T, path: string): T => {
  const checked = checkAnswer(
    schema,
    JSON.parse(readFileSync(new URL(`../../../test/fixtures/yelp/${path}`, import.meta.url), "utf8")),
  );
  if (!checked.ok) throw new Error(checked.problems.join("; "));
  return checked.value;
};
const lead = answer(YelpLead, "api-get-lead.json");
const events = answer(YelpEvents, "api-lead-events.json").events;
/**
 * The recorded answer lists our reply first, though its time_created is the later one: by the list
 * order, which rules (newest last, providers.md), the consumer's message is the newest.
 */
const recordedWithOurReply = answer(YelpEvents, "api-lead-events-with-our-reply.json").events;
/** Our reply after the consumer's message, in list order: our reply is the newest. */
const withOurReply = [...recordedWithOurReply].reverse();
const OUR_TEXT = "Thanks Marta, we can do Friday morning.";
const webhookTime = new Date("2026-03-14T16:05:42Z");
const newEvent = { occurredAt: webhookTime, payload: { event_type: "NEW_EVENT" } };
/** Events read as one stretch with nothing stored before. */
const read = (list: YelpEvent[]) => ({ runs: [{ events: list }], complete: true });

describe("Yelp lead rules", () => {
  it("the fetched lead and events: masked email, name and first name, service, details, messages by event id", () => {
    expect(yelpLeadUpdate(lead, read(events), newEvent)).toEqual({
      profile: {
        contact: { name: "Marta K.", firstName: "Marta", email: "m.k.4f2a9c@messaging.yelp.example.test" },
        service: "Water Heater Repair", // project.job_names, joined with ", "
        details: {
          conversation_id: "cOnv3Hj8Kl2Mn5Pq",
          project: lead.project,
          time_created: "2026-03-14T16:05:39+00:00",
          temporary_email_address_expiry: "2026-04-13T16:05:39+00:00",
        },
      },
      lastEventAt: new Date("2026-03-14T16:05:39Z"),
      providerCreatedAt: new Date("2026-03-14T16:05:39Z"), // the lead's time_created
      messages: [],
      history: {
        runs: [
          {
            messages: [
              {
                externalId: "evT0kQ3nR8sLw2Zy5Hc1Aa",
                cursor: "cur_0001",
                direction: "inbound",
                author: "Marta K.",
                text: "Hi, my water heater is leaking. Can someone come Friday?",
                sentAt: new Date("2026-03-14T16:05:39Z"),
              },
            ],
          },
        ],
        complete: true,
      },
    });
  });

  it("our own events are outbound; a real phone number wins over the temporary one", () => {
    const update = yelpLeadUpdate(
      Object.assign(new YelpLead(), {
        ...lead,
        phone_number: "4155550100",
        temporary_phone_number: "4155550199",
      }),
      read(recordedWithOurReply),
      newEvent,
    );
    expect(update.profile?.contact.phone).toBe("4155550100");
    expect(
      update.history?.runs[0]?.messages.map((message) => [message.externalId, message.direction]),
    ).toEqual([
      ["evB1zX7cV3bN5mQ8wE2rTy", "outbound"],
      ["evT0kQ3nR8sLw2Zy5Hc1Aa", "inbound"],
    ]);
  });

  it("without readable times the webhook's time stands in; a text-less event has no text", () => {
    const bare = Object.assign(new YelpLead(), { id: "l1" });
    const event = Object.assign(new YelpEvent(), {
      id: "e1",
      cursor: "c1",
      event_content: { fallback_text: "fb" },
    });
    const second = Object.assign(new YelpEvent(), { id: "e2", cursor: "c2" });
    const update = yelpLeadUpdate(bare, read([event, second]), newEvent);
    expect(update.lastEventAt).toEqual(webhookTime);
    expect(update.profile).toEqual({ contact: {}, details: {} });
    expect(update.history?.runs[0]?.messages).toMatchObject([
      { externalId: "e1", text: "fb", author: null, sentAt: webhookTime },
      { externalId: "e2", text: null },
    ]);
  });
});

describe("Yelp phone consent", () => {
  const withPhone = Object.assign(new YelpLead(), { ...lead, phone_number: "4155550100" });
  const consentEvent = (type: string) => ({ occurredAt: webhookTime, payload: { event_type: type } });

  it("an opt-out is consent false, as of the event's time, without a number", () => {
    expect(
      yelpLeadUpdate(withPhone, read([]), consentEvent("CONSUMER_PHONE_NUMBER_OPT_OUT_EVENT")).phoneConsent,
    ).toEqual({ granted: false, at: webhookTime });
  });

  it("an opt-in is consent true with the fetched number", () => {
    expect(
      yelpLeadUpdate(withPhone, read([]), consentEvent("CONSUMER_PHONE_NUMBER_OPT_IN_EVENT")).phoneConsent,
    ).toEqual({ granted: true, at: webhookTime, phone: "4155550100" });
  });

  it("other events (and a purged payload) say nothing about consent", () => {
    for (const event of [newEvent, consentEvent("CONSUMER_PHONE_NUMBER_AVAILABLE_EVENT")]) {
      expect(yelpLeadUpdate(withPhone, read([]), event).phoneConsent).toBeUndefined();
    }
    expect(
      yelpLeadUpdate(withPhone, read([]), { occurredAt: webhookTime, payload: null }).phoneConsent,
    ).toBeUndefined();
  });
});

describe("Yelp reply rules", () => {
  it("sends when only the consumer wrote", () => {
    expect(yelpReplyDecision(events, OUR_TEXT, false)).toBe("send");
  });

  it("never answers once the business wrote anywhere in the history (BIZ or API-SELF), nor without events", () => {
    expect(yelpReplyDecision(withOurReply, "another text", false)).toBe("business_already_replied");
    expect(yelpReplyDecision([], OUR_TEXT, false)).toBe("no_consumer_message");
    const biz = Object.assign(new YelpEvent(), {
      id: "b",
      user_type: "BIZ",
      time_created: "2026-03-15T00:00:00Z",
    });
    expect(yelpReplyDecision([...events, biz], OUR_TEXT, false)).toBe("business_already_replied");
    expect(yelpReplyDecision([biz, ...events], OUR_TEXT, false)).toBe("business_already_replied");
  });

  it("reads the recorded history with our reply as answered, whatever the list order and time_created say", () => {
    expect(yelpReplyDecision(recordedWithOurReply, OUR_TEXT, false)).toBe("business_already_replied");
    expect(yelpReplyDecision([...recordedWithOurReply].reverse(), OUR_TEXT, false)).toBe(
      "business_already_replied",
    );
  });

  it("after an unknown outcome, our text among our events is the reply already sent", () => {
    expect(yelpReplyDecision(withOurReply, `${OUR_TEXT}\r\n`, true)).toBe("reconciled");
    expect(yelpReplyDecision(withOurReply, OUR_TEXT, false)).toBe("business_already_replied");
    expect(yelpReplyDecision(events, "Hi, my water heater is leaking. Can someone come Friday?", true)).toBe(
      "send",
    );
  });
});

describe("Yelp follow-up", () => {
  const fake = (list: YelpEvent[]) => {
    const calls: string[] = [];
    const client = {
      getLead: (_token: string | undefined, id: string) => {
        calls.push(`GET lead ${id}`);
        return Promise.resolve(lead);
      },
      getEvents: (_token: string | undefined, id: string) => {
        calls.push(`GET events ${id}`);
        return Promise.resolve(list);
      },
      postText: (_token: string | undefined, id: string, text: string) => {
        calls.push(`POST ${id} ${text}`);
        return Promise.resolve();
      },
    };
    return { calls, inbox: new YelpInbox(client as unknown as YelpClient) };
  };

  it("fetches the lead and its events for the lead update", async () => {
    const { calls, inbox } = fake(events);
    const update = await inbox.leadUpdate(
      { leadId: "lEad7Pq2Wx9Mn4Bv6Ct8Dd", eventId: "ev", occurredAt: webhookTime, payload: {} },
      "t",
      () => Promise.resolve(null),
      () => Promise.resolve(null),
    );
    expect(update.history?.runs[0]?.messages).toHaveLength(1);
    expect(calls.sort()).toEqual(["GET events lEad7Pq2Wx9Mn4Bv6Ct8Dd", "GET lead lEad7Pq2Wx9Mn4Bv6Ct8Dd"]);
  });

  it("replies through the client, or records why not", async () => {
    const consumer = fake(events);
    await expect(
      consumer.inbox.reply({ leadId: "l", text: "Hello", token: "t", outcomeUnknown: false }),
    ).resolves.toEqual({ status: "succeeded" });
    expect(consumer.calls).toEqual(["GET events l", "POST l Hello"]);
    const ours = fake(withOurReply);
    await expect(
      ours.inbox.reply({ leadId: "l", text: "Hello", token: "t", outcomeUnknown: false }),
    ).resolves.toEqual({
      status: "skipped",
      ref: "business_already_replied",
      answeredAt: new Date("2026-03-14T16:06:10Z"), // the business's event's time_created
    });
    await expect(
      ours.inbox.reply({ leadId: "l", text: OUR_TEXT, token: "t", outcomeUnknown: true }),
    ).resolves.toEqual({ status: "succeeded", ref: "reconciled" });
    expect(ours.calls).toEqual(["GET events l", "GET events l"]);
  });
});
