import {
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
