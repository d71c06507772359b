import {
  backoffDelay,
  classify,
  CredentialError,
  errorForStatus,
  PermanentError,
  RetryableError,
  retryAfterMs,
} from "./errors.js";

describe("failure classes", () => {
  it.each([
    [500, "provider", "retryable"],
    [503, "crm", "retryable"],
    [429, "crm", "retryable"],
    [408, "provider", "retryable"],
    [400, "crm", "permanent"],
    [422, "provider", "permanent"],
    [401, "provider", "credential"],
    [403, "provider", "credential"],
    [401, "crm", "permanent"],
  ] as const)("HTTP %i from a %s is %s", (status, destination, kind) => {
    expect(classify(errorForStatus(status, null, destination)).kind).toBe(kind);
  });

  it("keeps Retry-After (seconds or HTTP date)", () => {
    expect(classify(errorForStatus(429, "7", "crm")).retryAfterMs).toBe(7000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6000);
    expect(retryAfterMs("soon")).toBeUndefined();
  });

  it("treats unknown errors as retryable", () => {
    expect(classify(new Error("boom"))).toEqual({ kind: "retryable", code: "internal_error" });
    expect(classify(new RetryableError("timeout")).code).toBe("timeout");
    expect(classify(new PermanentError("invalid")).kind).toBe("permanent");
    expect(classify(new CredentialError("http_401")).kind).toBe("credential");
  });
});

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
