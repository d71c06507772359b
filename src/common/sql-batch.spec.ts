import { executed, literal } from "./sql-batch.js";

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

  it("executes a prepared statement with each value as a literal, in order", () => {
    expect(executed("sql_batch_1", ["$2", 3, null])).toBe("EXECUTE sql_batch_1('$2', '3', NULL)");
    expect(executed("sql_batch_2", [])).toBe("EXECUTE sql_batch_2");
    expect(() => executed("sql_batch_3", [Number.POSITIVE_INFINITY])).toThrow(TypeError);
  });
});
