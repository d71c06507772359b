// Graceful worker shutdown: SIGTERM while a side effect is in flight lets it finish and record its
// outcome before the process exits 0.
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import { waitFor } from "../support/wait.js";

describe("worker shutdown", () => {
  const crm = useFakeServer({ status: 200, body: {}, delayMs: 1500 });
  const app = useApp();

  it("SIGTERM during a CRM call: the call completes, the job is recorded succeeded, exit 0", async () => {
    const c = await app.createConnection({
      provider: "staticforms",
      inboundAuth: { type: "bearer" },
      settings: { crmDestination: { url: `${crm.url}/crm` } },
    });
    const worker = app.spawn("dist/worker.js", { SIDE_EFFECT_TIMEOUT_MS: "5000" });
    await worker.waitFor(/worker started/);
    await post(
      `${app.url}/webhooks/staticforms/${c.connectionId}`,
      { event: "form.submitted", data: { submissionId: "shutdown-1", formData: { name: "S" } } },
      { authorization: `Bearer ${c.secrets.bearerToken}` },
    );
    await waitFor(
      () => Promise.resolve(crm.received.length),
      (n) => n === 1,
    );
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    const { rows } = await app.sql.query(
      "SELECT operation, status, attempts FROM jobs WHERE tenant_id = $1 ORDER BY operation",
      [c.tenantId],
    );
    expect(rows).toEqual([
      { operation: "crm-delivery", status: "succeeded", attempts: 1 },
      { operation: "lead-upsert", status: "succeeded", attempts: 1 },
    ]);
    expect(crm.received).toHaveLength(1);
  });
});
