import { addressKey, lockSeconds, MemoryPairs } from "./sign-in-throttle.js";

describe("sign-in throttling", () => {
  it("locks a pair after 5 failures for 60 s, doubling with each failure after, at most 15 minutes", () => {
    expect([1, 4, 5, 6, 7, 8, 9, 10, 60].map(lockSeconds)).toEqual([0, 0, 60, 120, 240, 480, 900, 900, 900]);
  });

  it.each([
    ["203.0.113.7", "203.0.113.7"],
    ["::ffff:203.0.113.7", "203.0.113.7"],
    ["2001:db8:1:2::1", "2001:db8:1:2::/64"],
    ["2001:0db8:0001:0002:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64"],
    ["2001:db8:1:3::1", "2001:db8:1:3::/64"],
    ["not an address", "not an address"],
  ])("counts %s as %s", (ip, key) => {
    expect(addressKey(ip)).toBe(key);
  });

  it("in memory (Redis not answering) a pair follows the same rule: locked, then counted again once the lock ends", () => {
    const pairs = new MemoryPairs();
    const t0 = 1_000_000;
    for (let i = 0; i < 5; i++) expect(pairs.take("p", t0)).toBe(0);
    expect(pairs.take("p", t0 + 1_000)).toBe(59_000);
    expect(pairs.take("other", t0 + 1_000)).toBe(0);
    expect(pairs.take("p", t0 + 60_000)).toBe(0); // the 6th attempt, after the lock: 120 s
    expect(pairs.take("p", t0 + 60_001)).toBe(119_999);
    pairs.forget("p"); // a success
    expect(pairs.take("p", t0 + 60_002)).toBe(0);
    // Forgotten 15 minutes after its last attempt (or lock).
    for (let i = 0; i < 4; i++) pairs.take("q", t0);
    expect(pairs.take("q", t0 + 15 * 60_000 + 1)).toBe(0);
    for (let i = 0; i < 3; i++) expect(pairs.take("q", t0 + 15 * 60_000 + 1)).toBe(0);
  });
});
