// Who answered a Yelp lead (api.md "Who answered"): API-SELF and our own channel-less text within
// 10 minutes are Leadgate's; every other BIZ event is the business's.
import { yelpLeadUpdate } from "./yelp.inbox.js";
import { YelpEvent, YelpLead } from "./yelp.schemas.js";
import { earliestTime, isBusinessOwn } from "./yelp.who-answered.js";

const OURS = { text: "Thanks Marta, we will call you.", at: new Date("2026-03-14T16:06:00Z") };
const event = (fields: Partial<YelpEvent>) =>
  Object.assign(new YelpEvent(), {
    id: "e",
    cursor: "c",
    user_type: "BIZ",
    event_content: { text: OURS.text },
    time_created: "2026-03-14T16:06:05+00:00",
    ...fields,
  });

describe("Yelp: who answered", () => {
  it("an API-SELF event is ours, whatever its text", () => {
    expect(isBusinessOwn(event({ channel: "API-SELF", event_content: { text: "other" } }), OURS)).toBe(false);
  });

  it("a channel-less BIZ event with our text within 10 minutes after our reply is ours", () => {
    expect(isBusinessOwn(event({}), OURS)).toBe(false);
    expect(isBusinessOwn(event({ event_content: { text: `  ${OURS.text}\r\n` } }), OURS)).toBe(false);
    expect(isBusinessOwn(event({ time_created: "2026-03-14T16:15:59+00:00" }), OURS)).toBe(false);
  });

  it("the business's: another text, no reply of ours, more than 10 minutes later, another channel", () => {
    expect(isBusinessOwn(event({ event_content: { text: "I can come at 3pm." } }), OURS)).toBe(true);
    expect(isBusinessOwn(event({}), null)).toBe(true);
    expect(isBusinessOwn(event({ time_created: "2026-03-14T16:16:01+00:00" }), OURS)).toBe(true);
    expect(isBusinessOwn(event({ time_created: "2026-03-14T16:00:00+00:00" }), OURS)).toBe(true);
    expect(isBusinessOwn(event({ channel: "WEB" }), OURS)).toBe(true);
  });

  it("the consumer's events are nobody's answer", () => {
    expect(isBusinessOwn(event({ user_type: "CONSUMER", event_content: { text: "hi" } }), OURS)).toBe(false);
  });

  it("the lead update names the earliest of the business's events", () => {
    const events = [
      event({ id: "late", event_content: { text: "Still there?" }, time_created: "2026-03-14T17:00:00Z" }),
      event({ id: "ours" }),
      event({ id: "first", event_content: { text: "Hello!" }, time_created: "2026-03-14T16:30:00Z" }),
    ];
    const update = yelpLeadUpdate(
      Object.assign(new YelpLead(), { id: "l" }),
      { runs: [{ events }], complete: true },
      { occurredAt: new Date("2026-03-14T16:05:00Z"), payload: {} },
      OURS,
    );
    expect(update.businessAnsweredAt).toEqual(new Date("2026-03-14T16:30:00Z"));
    expect(earliestTime(events, (item) => item.id === "ours")).toEqual(new Date("2026-03-14T16:06:05Z"));
  });
});
