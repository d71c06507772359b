import { redact } from "./logger.js";

describe("log redaction", () => {
  it("removes auth headers, secrets, tokens and form contents at any depth, and keeps ids and outcomes", () => {
    const entry = {
      msg: "delivery",
      requestId: "req-1",
      tenantId: "t-1",
      headers: {
        authorization: "Bearer abc",
        Cookie: "s=1",
        "x-api-key": "k",
        "content-type": "application/json",
      },
      secrets: { bearerToken: "tok" },
      connection: { crmSigningSecret: "whsec_x", credentials: { accessToken: "a", refreshToken: "r" } },
      events: [{ eventId: "e-1", payload: { formData: { name: "Ann", email: "ann@example.test" } } }],
      data: { apiKey: "sf_key", formData: { message: "private" }, text: "hello", phone: "555" },
      outcome: "accepted",
    };
    expect(redact(entry)).toEqual({
      msg: "delivery",
      requestId: "req-1",
      tenantId: "t-1",
      headers: {
        authorization: "[redacted]",
        Cookie: "[redacted]",
        "x-api-key": "[redacted]",
        "content-type": "application/json",
      },
      secrets: "[redacted]",
      connection: { crmSigningSecret: "[redacted]", credentials: "[redacted]" },
      events: [{ eventId: "e-1", payload: "[redacted]" }],
      data: { apiKey: "[redacted]", formData: "[redacted]", text: "[redacted]", phone: "[redacted]" },
      outcome: "accepted",
    });
    expect(redact("plain text")).toBe("plain text");
  });
});
