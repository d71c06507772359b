// Graceful worker shutdown: SIGTERM while a side effect is in flight lets it finish and record its
// outcome before the process exits 0.
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { type RunningApi, startApi, testConfig, TEST_ENCRYPTION_KEY } from "../support/app.js";
import { type FakeServer, startFakeServer } from "../support/fake-server.js";
import { post } from "../support/http.js";
import { spawnNode } from "../support/process.js";
import { createTenantWithConnection } from "../support/tenants.js";
import { waitFor } from "../support/wait.js";

describe("worker shutdown", () => {
  let db: TestDatabase;
  let api: RunningApi;
  let crm: FakeServer;
  let env: Record<string, string>;

  beforeAll(async () => {
    db = await createTestDatabase();
    crm = await startFakeServer({ status: 200, body: {}, delayMs: 1500 });
    const config = testConfig(db.url);
    env = {
      DATABASE_URL: db.url,
      LEADGATE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      REDIS_PREFIX: config.redisPrefix,
      SIDE_EFFECT_TIMEOUT_MS: "5000",
    };
    api = await startApi(config);
  });
  afterAll(async () => {
    await api.close();
    await crm.close();
    await db.drop();
  });

  it("SIGTERM during a CRM call: the call completes, the job is recorded succeeded, exit 0", async () => {
    const c = await createTenantWithConnection(api.app, {
      provider: "staticforms",
      inboundAuth: { type: "bearer" },
      settings: { crmDestination: { url: `${crm.url}/crm` } },
    });
    const worker = spawnNode("dist/worker.js", env);
    await worker.waitFor(/worker started/);
    await post(
      `${api.url}/webhooks/staticforms/${c.connectionId}`,
      { event: "form.submitted", data: { submissionId: "shutdown-1", formData: { name: "S" } } },
      { authorization: `Bearer ${c.secrets.bearerToken}` },
    );
    await waitFor(
      () => Promise.resolve(crm.received.length),
      (n) => n === 1,
    );
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    const { rows } = await db.sql.query(
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
