// Yelp's recorded API answers (test/fixtures/yelp, from ../shared/fixtures) pass the schemas; answers
// of another shape do not.
import { readFileSync } from "node:fs";
import { checkAnswer } from "../../common/outbound/answer-schema.js";
import { YelpEvent, YelpEvents, YelpLead } from "./yelp.schemas.js";

const read = (path: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../../../test/fixtures/yelp/${path}`, import.meta.url), "utf8")) as Record<
    string,
    unknown
  >;
const problems = (schema: typeof YelpLead | typeof YelpEvents, value: unknown) => {
  const checked = checkAnswer<object>(schema, value);
  return checked.ok ? [] : checked.problems;
};

describe("Yelp answer schemas", () => {
  it("take the recorded lead, with nulls and the project kept as sent", () => {
    const lead = read("api-get-lead.json");
    const checked = checkAnswer(YelpLead, lead);
    expect(checked.ok).toBe(true);
    if (!checked.ok) return;
    expect(checked.value).toBeInstanceOf(YelpLead);
    expect(checked.value).toMatchObject({
      id: "lEad7Pq2Wx9Mn4Bv6Ct8Dd",
      user: { display_name: "Marta K." },
      phone_number: null,
      last_event_time: "2026-03-14T16:05:39+00:00",
    });
    expect(checked.value.project).toEqual(lead.project);
  });

  it.each(["api-lead-events.json", "api-lead-events-with-our-reply.json"])("take the recorded %s", (path) => {
    const checked = checkAnswer(YelpEvents, read(path));
    expect(checked.ok).toBe(true);
    if (checked.ok) expect(checked.value.events.every((event) => event instanceof YelpEvent)).toBe(true);
  });

  it("take events with only an id and a cursor, and an empty list", () => {
    expect(problems(YelpEvents, { events: [] })).toEqual([]);
    expect(
      problems(YelpEvents, { events: [{ id: "e1", cursor: "c1", event_content: null, channel: null }] }),
    ).toEqual([]);
  });

  it.each([
    ["events not a list", { events: "nope" }, "events"],
    ["no events", {}, "events"],
    ["an event that is not an object", { events: [5] }, "events.0"],
    ["an event without id", { events: [{ cursor: "c", user_type: "CONSUMER" }] }, "events.0.id"],
    ["an event without cursor (paging needs it)", { events: [{ id: "e" }] }, "events.0.cursor"],
    [
      "an event with a numeric time",
      { events: [{ id: "e", cursor: "c", time_created: 1710432339 }] },
      "events.0.time_created",
    ],
    [
      "event content as text",
      { events: [{ id: "e", cursor: "c", event_content: "hi" }] },
      "events.0.event_content",
    ],
    [
      "a message text that is no string",
      { events: [{ id: "e", cursor: "c", event_content: { text: 7 } }] },
      "events.0.event_content.text",
    ],
  ])("refuse an events list with %s", (_what, answer, path) => {
    expect(problems(YelpEvents, answer).some((problem) => problem.startsWith(`${path}:`))).toBe(true);
  });

  it.each([
    ["no id", { user: { display_name: "M" } }, "id"],
    ["an empty id", { id: "" }, "id"],
    ["a user that is text", { id: "l", user: "Marta" }, "user"],
    ["a numeric phone", { id: "l", phone_number: 5551234 }, "phone_number"],
    ["a project that is a list", { id: "l", project: [] }, "project"],
  ])("refuse a lead with %s", (_what, answer, path) => {
    expect(problems(YelpLead, answer).some((problem) => problem.startsWith(`${path}:`))).toBe(true);
  });
});
