import { backoffDelay } from "./backoff.js";

describe("backoffDelay", () => {
  const middle = () => 0.5;
  it("grows by 5x per attempt from the base", () => {
    expect([1, 2, 3, 4].map((attempt) => backoffDelay(attempt, 1000, undefined, middle))).toEqual([
      1000, 5000, 25000, 125000,
    ]);
  });
  it("jitters within ±25 %", () => {
    expect(backoffDelay(2, 1000, undefined, () => 0)).toBe(3750);
    expect(backoffDelay(2, 1000, undefined, () => 1)).toBe(6250);
  });
  it("is capped at one hour and honours a longer Retry-After", () => {
    expect(backoffDelay(20, 1000, undefined, middle)).toBe(3_600_000);
    expect(backoffDelay(1, 1000, 30_000, middle)).toBe(30_000);
    expect(backoffDelay(3, 1000, 10, middle)).toBe(25000);
  });
});
