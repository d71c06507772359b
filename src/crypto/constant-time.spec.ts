import { bearerMatches, secretsEqual } from "./constant-time.js";

describe("secretsEqual", () => {
  it("is true only for the same text", () => {
    expect(secretsEqual("tok_abc123", "tok_abc123")).toBe(true);
    expect(secretsEqual("tok_abc124", "tok_abc123")).toBe(false);
    expect(secretsEqual("tok_abc12", "tok_abc123")).toBe(false);
    expect(secretsEqual("tok_abc1234", "tok_abc123")).toBe(false);
    expect(secretsEqual("", "tok_abc123")).toBe(false);
    expect(secretsEqual("é", "\u00e9")).toBe(true);
    expect(secretsEqual("é", "e\u0301")).toBe(false);
  });

  it("is false for a missing value, even against an empty secret", () => {
    expect(secretsEqual(undefined, "tok_abc123")).toBe(false);
    expect(secretsEqual(undefined, "")).toBe(false);
    expect(secretsEqual("", "")).toBe(true);
  });
});

describe("bearerMatches", () => {
  it("takes only `Bearer <token>`", () => {
    expect(bearerMatches("Bearer tok_1", "tok_1")).toBe(true);
    expect(bearerMatches("bearer tok_1", "tok_1")).toBe(false);
    expect(bearerMatches("Bearer tok_2", "tok_1")).toBe(false);
    expect(bearerMatches(undefined, "tok_1")).toBe(false);
  });
});
