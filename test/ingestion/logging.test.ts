// Invariant 8: every delivery is logged with its context (request id, tenant, connection,
// provider, ids, outcome), never with credentials or form contents.
import { RedactingLogger } from "../../src/observability/logger.js";
import { useApp } from "../support/harness.js";
import { post } from "../support/http.js";

/** The production JSON logger (redaction included), writing into memory. */
class CapturingLogger extends RedactingLogger {
  readonly lines: string[] = [];
  protected override emit(messages: unknown[], context?: string, logLevel?: string): void {
    this.lines.push(JSON.stringify({ messages, context, logLevel }));
  }
}

describe("delivery logs", () => {
  const logger = new CapturingLogger();
  const app = useApp({ logger });

  it("carry the context and outcome, but no secret and no form content", async () => {
    const connection = await app.createConnection({
      provider: "staticforms",
      inboundAuth: { type: "token" },
    });
    const token = connection.secrets.token!;
    const url = `${app.url}/webhooks/staticforms/${connection.connectionId}`;
    const body = {
      event: "form.submitted",
      data: {
        submissionId: "log-1",
        apiKey: "sf_secret_api_key_123",
        formData: { name: "Very Private Person", email: "private@example.test", message: "my secret plans" },
      },
    };
    expect((await post(`${url}?token=${token}`, body, { "x-request-id": "req-log-1" })).status).toBe(202);
    expect((await post(`${url}?token=wrong-token-value`, body, { "x-request-id": "req-log-2" })).status).toBe(
      401,
    );

    const logs = logger.lines.join("\n");
    const accepted = logger.lines.find((line) => line.includes("req-log-1"));
    expect(accepted).toBeDefined();
    for (const field of [connection.tenantId, connection.connectionId, "staticforms", "log-1", "accepted"]) {
      expect(accepted).toContain(field);
    }
    expect(logger.lines.find((line) => line.includes("req-log-2"))).toContain("unauthorized");
    for (const secret of [
      token,
      "wrong-token-value",
      "sf_secret_api_key_123",
      "Very Private Person",
      "private@example.test",
      "my secret plans",
    ]) {
      expect(logs).not.toContain(secret);
    }
  });
});
