// Thumbtack's message lists pass the schema under `messages` or `data`; other shapes do not.
import { checkAnswer } from "../../common/outbound/answer-schema.js";
import { ThumbtackMessage, ThumbtackMessages } from "./thumbtack.schemas.js";

const problems = (value: unknown) => {
  const checked = checkAnswer(ThumbtackMessages, value);
  return checked.ok ? [] : checked.problems;
};

describe("Thumbtack answer schemas", () => {
  it("take a message list under messages or data, ids as strings or integers", () => {
    const message = { messageID: "700000000000000808", from: "Business", text: "Monday 2pm works." };
    const checked = checkAnswer(ThumbtackMessages, { messages: [message, { messageID: 42, text: null }] });
    expect(checked.ok).toBe(true);
    if (checked.ok) expect(checked.value.messages?.[0]).toBeInstanceOf(ThumbtackMessage);
    expect(problems({ data: [message] })).toEqual([]);
    expect(problems({ messages: null, data: [] })).toEqual([]);
    expect(problems({ messages: [] })).toEqual([]);
  });

  it.each([
    ["no list", {}, "messages"],
    ["a list that is text", { messages: "none" }, "messages"],
    ["data that is an object", { data: { messages: [] } }, "data"],
    ["a message that is no object", { messages: ["hi"] }, "messages.0"],
    ["a numeric text", { messages: [{ from: "Business", text: 5 }] }, "messages.0.text"],
    ["a sender that is no string", { messages: [{ from: { name: "x" } }] }, "messages.0.from"],
    ["a fractional id", { messages: [{ messageID: 1.5 }] }, "messages.0.messageID"],
    ["an empty id", { messages: [{ messageID: "" }] }, "messages.0.messageID"],
  ])("refuse an answer with %s", (_what, answer, path) => {
    expect(problems(answer).some((problem) => problem.startsWith(`${path}:`))).toBe(true);
  });
});
