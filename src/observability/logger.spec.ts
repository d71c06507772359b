import { RedactingLogger, redact } from "./logger.js";

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

describe("Nest's boot chatter", () => {
  /** A logger at `level` that keeps what it would write: [message, context, level]. */
  const capture = (level: "info" | "debug") => {
    const lines: unknown[][] = [];
    const logger = new (class extends RedactingLogger {
      protected override emit(messages: unknown[], context?: string, logLevel?: string): void {
        for (const message of messages) lines.push([message, context, logLevel]);
      }
    })(level);
    return { logger, lines };
  };

  it("route mapping, controllers and module initialization are debug; other log lines stay info", () => {
    const info = capture("info");
    info.logger.log("Mapped {/admin/tenants, POST} route", "RouterExplorer");
    info.logger.log("TenantsController {/admin/tenants}:", "RoutesResolver");
    info.logger.log("AdminModule dependencies initialized", "InstanceLoader");
    info.logger.log({ msg: "api listening", port: 3000 }, "bootstrap");
    expect(info.lines).toEqual([[{ msg: "api listening", port: 3000 }, "bootstrap", "log"]]);

    const debug = capture("debug");
    debug.logger.log("Mapped {/admin/tenants, POST} route", "RouterExplorer");
    expect(debug.lines).toEqual([["Mapped {/admin/tenants, POST} route", "RouterExplorer", "debug"]]);
  });
});
