// Invariant 8: every delivery is logged with its context (request id, tenant, connection,
// provider, ids, outcome), never with credentials or form contents. At `info` an accepted
// delivery is counted in its batch's line (`receipts written`, one line per second at most under
// load, src/observability/batch-summary.ts); its own line is at `debug`.
import { RedactingLogger } from "../../src/observability/logger.js";
import { useApp } from "../support/harness.js";
import { post } from "../support/http.js";
import { waitFor } from "../support/wait.js";

/** The production JSON logger (redaction included), writing into memory. */
class CapturingLogger extends RedactingLogger {
  readonly lines: string[] = [];
  protected override emit(messages: unknown[], context?: string, logLevel?: string): void {
    this.lines.push(JSON.stringify({ messages, context, logLevel }));
  }
}

describe("delivery logs", () => {
  const logger = new CapturingLogger("debug");
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

describe("delivery logs at info", () => {
  const logger = new CapturingLogger("info");
  const app = useApp({ logger });

  it("count written batches (the second within a second in a line at its end), and a line per refused delivery", async () => {
    const connection = await app.createConnection({
      provider: "staticforms",
      inboundAuth: { type: "token" },
    });
    const url = `${app.url}/webhooks/staticforms/${connection.connectionId}?token=${connection.secrets.token!}`;
    const body = (id: string) => ({
      event: "form.submitted",
      data: { submissionId: id, formData: { name: "Private Name", message: "private text" } },
    });
    expect((await post(url, body("info-1"), { "x-request-id": "req-info-1" })).status).toBe(202);
    expect((await post(url, body("info-1"), { "x-request-id": "req-info-2" })).status).toBe(200);
    const wrong = `${app.url}/webhooks/staticforms/${connection.connectionId}?token=wrong-token-value`;
    expect((await post(wrong, body("info-2"), { "x-request-id": "req-info-3" })).status).toBe(401);

    const written = () =>
      logger.lines
        .filter((line) => line.includes("receipts written"))
        .map((line) => (JSON.parse(line) as { messages: Record<string, unknown>[] }).messages[0]!);
    // The first batch is written at once; the second, less than a second later, when that second ends
    // (src/observability/batch-summary.spec.ts).
    const batches = await waitFor(
      () => Promise.resolve(written()),
      (lines) => lines.length >= 2,
    );
    expect(
      batches.map(({ batches, deliveries, stored, duplicates }) => ({
        batches,
        deliveries,
        stored,
        duplicates,
      })),
    ).toEqual([
      { batches: 1, deliveries: 1, stored: 1, duplicates: 0 },
      { batches: 1, deliveries: 1, stored: 0, duplicates: 1 },
    ]);
    expect(logger.lines.filter((line) => /req-info-[12]/.test(line))).toEqual([]);
    expect(logger.lines.find((line) => line.includes("req-info-3"))).toContain("unauthorized");
    const logs = logger.lines.join("\n");
    for (const secret of ["Private Name", "private text", "wrong-token-value", connection.secrets.token!]) {
      expect(logs).not.toContain(secret);
    }
  });
});
