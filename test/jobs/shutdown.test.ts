// Graceful worker shutdown: SIGTERM while side effects are in flight lets them finish and record
// their outcome before the process exits 0; what had not started stays queued for the next worker.
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import { waitFor } from "../support/wait.js";

describe("worker shutdown", () => {
  const crm = useFakeServer({ status: 200, body: {}, delayMs: 1500 });
  const app = useApp();

  /** A connection delivering to the slow CRM, and a worker process, started. */
  const connectionAndWorker = async () => {
    const c = await app.createConnection({
      provider: "staticforms",
      inboundAuth: { type: "bearer" },
      settings: { crmDestination: { url: `${crm.url}/crm` } },
    });
    const worker = app.spawn("dist/worker.js", { SIDE_EFFECT_TIMEOUT_MS: "5000" });
    await worker.waitFor(/worker started/);
    return { c, worker };
  };

  it("SIGTERM during a CRM call: the call completes, the job is recorded succeeded, exit 0", async () => {
    const { c, worker } = await connectionAndWorker();
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

  it("SIGTERM under a burst: every started delivery is recorded, none is left running, none sent twice", async () => {
    const { c, worker } = await connectionAndWorker();
    const before = crm.received.length;
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        post(
          `${app.url}/webhooks/staticforms/${c.connectionId}`,
          { event: "form.submitted", data: { submissionId: `burst-${i}`, formData: { name: "S" } } },
          { authorization: `Bearer ${c.secrets.bearerToken}` },
        ),
      ),
    );
    expect(answers.every((answer) => answer.status === 202)).toBe(true);
    await waitFor(
      () => Promise.resolve(crm.received.length - before),
      (n) => n >= 5,
    );
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    const { rows } = await app.sql.query<{ operation: string; status: string; n: number }>(
      `SELECT operation, status, count(*)::int AS n FROM jobs WHERE tenant_id = $1
       GROUP BY operation, status ORDER BY operation, status`,
      [c.tenantId],
    );
    expect(rows.filter((row) => !["succeeded", "queued", "waiting"].includes(row.status))).toEqual([]);
    const succeeded =
      rows.find((row) => row.operation === "crm-delivery" && row.status === "succeeded")?.n ?? 0;
    const ids = crm.received.slice(before).map((request) => request.headers["webhook-id"]);
    // Each delivery the CRM received was recorded as succeeded, once.
    expect(new Set(ids).size).toBe(ids.length);
    expect(succeeded).toBe(ids.length);
  });
});
