import { inlined, literal } from "./sql-batch.js";

describe("SQL batch literals", () => {
  it("writes each value as a quoted literal that Postgres types by context", () => {
    expect(literal(null)).toBe("NULL");
    expect(literal(undefined)).toBe("NULL");
    expect(literal("it's")).toBe("'it''s'");
    expect(literal("back\\slash")).toBe(" E'back\\\\slash'");
    expect(literal(30000)).toBe("'30000'");
    expect(literal(true)).toBe("'true'");
    expect(literal(new Date("2026-12-01T02:00:00.000Z"))).toBe("'2026-12-01T02:00:00.000Z'");
    expect(literal(["queued", 'say "hi"', null])).toBe(` E'{"queued","say \\\\"hi\\\\"",NULL}'`);
    expect(literal({ a: "o'k" })).toBe(`'{"a":"o''k"}'`);
    expect(() => literal(Number.NaN)).toThrow(TypeError);
    expect(() => literal([{}])).toThrow(TypeError);
  });

  it("replaces every $n by its value's literal, $10 apart from $1, and never reads a value's text as a parameter", () => {
    const values = ["$2", "b", 3, 4, 5, 6, 7, 8, 9, "ten"];
    expect(inlined({ text: "SELECT $1, $10, $2::text", values })).toBe("SELECT '$2', 'ten', 'b'::text");
    expect(() => inlined({ text: "SELECT $2", values: ["a"] })).toThrow(RangeError);
  });
});
