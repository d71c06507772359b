import { granted, leaseSize } from "./rate-limiter.js";

describe("rate limit leases", () => {
  it("reserve a twentieth of the limit, at least 1 (small limits stay exact) and at most 200", () => {
    expect([1, 5, 19, 20, 600, 1_000, 12_000, 10_000_000].map(leaseSize)).toEqual([
      1, 1, 1, 1, 30, 50, 200, 200,
    ]);
  });

  it("grant the part of a reservation still under the limit", () => {
    expect(granted(600, 30, 30)).toBe(30); // the window's first lease
    expect(granted(600, 600, 30)).toBe(30); // exactly reaches the limit
    expect(granted(600, 610, 30)).toBe(20); // crosses it: only what fits
    expect(granted(600, 640, 30)).toBe(0); // the window was full already
    expect(granted(5, 6, 1)).toBe(0);
  });
});
