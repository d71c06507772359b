// Yelp's recorded API answers (test/fixtures/yelp), checked by the client's schemas, become this lead
// update; the reply is never sent when the newest event is ours, and not twice after an unknown outcome.
import { readFileSync } from "node:fs";
import { checkAnswer } from "../../common/outbound/answer-schema.js";
import type { YelpClient } from "./yelp.client.js";
import { YelpFollowUp, yelpLeadUpdate, yelpReplyDecision } from "./yelp.follow-up.js";
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
const withOurReply = answer(YelpEvents, "api-lead-events-with-our-reply.json").events;
const OUR_TEXT = "Thanks Marta, we can do Friday morning.";
const webhookTime = new Date("2026-03-14T16:05:42Z");

describe("Yelp lead rules", () => {
  it("the fetched lead and events: masked email, name, details, messages by event id", () => {
    expect(yelpLeadUpdate(lead, events, webhookTime)).toEqual({
      profile: {
        contact: { name: "Marta K.", email: "m.k.4f2a9c@messaging.yelp.example.test" },
        details: {
          conversation_id: "cOnv3Hj8Kl2Mn5Pq",
          project: lead.project,
          time_created: "2026-03-14T16:05:39+00:00",
          temporary_email_address_expiry: "2026-04-13T16:05:39+00:00",
        },
      },
      lastEventAt: new Date("2026-03-14T16:05:39Z"),
      messages: [
        {
          externalId: "evT0kQ3nR8sLw2Zy5Hc1Aa",
          direction: "inbound",
          author: "Marta K.",
          text: "Hi, my water heater is leaking. Can someone come Friday?",
          sentAt: new Date("2026-03-14T16:05:39Z"),
        },
      ],
    });
  });

  it("our own events are outbound; a real phone number wins over the temporary one", () => {
    const update = yelpLeadUpdate(
      Object.assign(new YelpLead(), {
        ...lead,
        phone_number: "4155550100",
        temporary_phone_number: "4155550199",
      }),
      withOurReply,
      webhookTime,
    );
    expect(update.profile?.contact.phone).toBe("4155550100");
    expect(update.messages.map((message) => [message.externalId, message.direction])).toEqual([
      ["evB1zX7cV3bN5mQ8wE2rTy", "outbound"],
      ["evT0kQ3nR8sLw2Zy5Hc1Aa", "inbound"],
    ]);
  });

  it("without readable times the webhook's time stands in; a text-less event has no text", () => {
    const bare = Object.assign(new YelpLead(), { id: "l1" });
    const event = Object.assign(new YelpEvent(), { id: "e1", event_content: { fallback_text: "fb" } });
    const update = yelpLeadUpdate(bare, [event, Object.assign(new YelpEvent(), { id: "e2" })], webhookTime);
    expect(update.lastEventAt).toEqual(webhookTime);
    expect(update.profile).toEqual({ contact: {}, details: {} });
    expect(update.messages).toMatchObject([
      { externalId: "e1", text: "fb", author: null, sentAt: webhookTime },
      { externalId: "e2", text: null },
    ]);
  });
});

describe("Yelp reply rules", () => {
  it("sends when the newest event is the consumer's", () => {
    expect(yelpReplyDecision(events, OUR_TEXT, false)).toBe("send");
  });

  it("never answers when the newest event is ours (BIZ or API-SELF), or when there is none", () => {
    expect(yelpReplyDecision(withOurReply, "another text", false)).toBe("latest_event_is_ours");
    expect(yelpReplyDecision([], OUR_TEXT, false)).toBe("latest_event_is_ours");
    const biz = Object.assign(new YelpEvent(), {
      id: "b",
      user_type: "BIZ",
      time_created: "2026-03-15T00:00:00Z",
    });
    expect(yelpReplyDecision([...events, biz], OUR_TEXT, false)).toBe("latest_event_is_ours");
  });

  it("after an unknown outcome, our text among our events is the reply already sent", () => {
    expect(yelpReplyDecision(withOurReply, `${OUR_TEXT}\r\n`, true)).toBe("reconciled");
    expect(yelpReplyDecision(withOurReply, OUR_TEXT, false)).toBe("latest_event_is_ours");
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
    return { calls, followUp: new YelpFollowUp(client as unknown as YelpClient) };
  };

  it("fetches the lead and its events for the lead update", async () => {
    const { calls, followUp } = fake(events);
    const update = await followUp.leadUpdate(
      { leadId: "lEad7Pq2Wx9Mn4Bv6Ct8Dd", eventId: "ev", occurredAt: webhookTime, payload: {} },
      "t",
    );
    expect(update.messages).toHaveLength(1);
    expect(calls.sort()).toEqual(["GET events lEad7Pq2Wx9Mn4Bv6Ct8Dd", "GET lead lEad7Pq2Wx9Mn4Bv6Ct8Dd"]);
  });

  it("replies through the client, or records why not", async () => {
    const consumer = fake(events);
    await expect(
      consumer.followUp.reply({ leadId: "l", text: "Hello", token: "t", outcomeUnknown: false }),
    ).resolves.toEqual({ status: "succeeded" });
    expect(consumer.calls).toEqual(["GET events l", "POST l Hello"]);
    const ours = fake(withOurReply);
    await expect(
      ours.followUp.reply({ leadId: "l", text: "Hello", token: "t", outcomeUnknown: false }),
    ).resolves.toEqual({ status: "skipped", ref: "latest_event_is_ours" });
    await expect(
      ours.followUp.reply({ leadId: "l", text: OUR_TEXT, token: "t", outcomeUnknown: true }),
    ).resolves.toEqual({ status: "succeeded", ref: "reconciled" });
    expect(ours.calls).toEqual(["GET events l", "GET events l"]);
  });
});
