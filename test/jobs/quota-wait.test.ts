// A CRM delivery run in the process of its lead-upsert, at once (no BullMQ job behind it): it runs in
// a slot of its own, not in its lead-upsert's BullMQ slot, so a slow destination holds no lead-upsert;
// and a quota wait ends on time: one that finds its destination's slots taken waits without an
// attempt, and is handed to BullMQ for its wait's end, so it runs then and not at the dispatcher's
// next pass (here: never).
import { Queue } from "bullmq";
import { queuePrefix } from "../../src/queues/queue-names.js";
import { fakeServer, useApp } from "../support/harness.js";
import { post } from "../support/http.js";
import { testRedis } from "../support/redis.js";
import { waitFor } from "../support/wait.js";

describe("a released job run in process", () => {
  const app = useApp({
    worker: true,
    env: { DESTINATION_MAX_CONCURRENCY: "1", DISPATCHER_INTERVAL_MS: "3600000" },
  });

  /** A Static Forms connection whose CRM is `crmUrl`. */
  const connectionTo = (crmUrl: string) =>
    app.createConnection({
      provider: "staticforms",
      inboundAuth: { type: "bearer" },
      settings: { crmDestination: { url: `${crmUrl}/hook` } },
    });

  it("after a quota wait, runs at the wait's end without the dispatcher, using no attempt", async () => {
    // Slower than the 500 ms a call waits for a slot: the second delivery gives its slot back and waits.
    const slow = await fakeServer({ status: 200, delayMs: 1_200 });
    const c = await connectionTo(slow.url);
    const answers = await Promise.all(
      ["q-1", "q-2"].map((id) =>
        post(
          `${app.url}/webhooks/staticforms/${c.connectionId}`,
          { event: "form.submitted", data: { submissionId: id, formData: { name: "Ann" } } },
          { authorization: `Bearer ${c.secrets.bearerToken}` },
        ),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual([202, 202]);

    const jobs = () =>
      app.sql
        .query<{ status: string; attempts: number; last_error_code: string | null }>(
          `SELECT status, attempts, last_error_code FROM jobs
           WHERE tenant_id = $1 AND operation = 'crm-delivery'`,
          [c.tenantId],
        )
        .then((result) => result.rows);
    // One of the two waited for the slot (seen `waiting` for its quota) ...
    await waitFor(
      () => app.sql.query("SELECT 1 FROM jobs WHERE tenant_id = $1 AND waiting_for = 'quota'", [c.tenantId]),
      (result) => (result.rowCount ?? 0) > 0,
    );
    // ... and both are delivered, one at a time, each with its one attempt.
    const done = await waitFor(
      jobs,
      (rows) => rows.length === 2 && rows.every((row) => row.status === "succeeded"),
    );
    expect(done.map((row) => row.attempts)).toEqual([1, 1]);
    expect(new Set(slow.received.map((request) => request.headers["webhook-id"])).size).toBe(2);
    expect(slow.mostInFlight).toBe(1);
  }, 30_000);

  it("holds no BullMQ slot of the lead-upsert that released it while its slow destination answers", async () => {
    const slow = await fakeServer({ status: 200, delayMs: 3_000 });
    const c = await connectionTo(slow.url);
    const answer = await post(
      `${app.url}/webhooks/staticforms/${c.connectionId}`,
      { event: "form.submitted", data: { submissionId: "held-1", formData: { name: "Ann" } } },
      { authorization: `Bearer ${c.secrets.bearerToken}` },
    );
    expect(answer.status).toBe(202);
    await waitFor(
      () => Promise.resolve(slow.received.length),
      (n) => n === 1,
    );
    const jobs = () =>
      app.sql
        .query<{ id: string; operation: string; status: string; attempts: number }>(
          "SELECT id, operation, status, attempts FROM jobs WHERE tenant_id = $1 ORDER BY operation",
          [c.tenantId],
        )
        .then((result) => result.rows);
    // The CRM holds the delivery: the lead-upsert is done, in Postgres and in BullMQ.
    const held = await jobs();
    expect(held.map((job) => [job.operation, job.status])).toEqual([
      ["crm-delivery", "running"],
      ["lead-upsert", "succeeded"],
    ]);
    const redis = testRedis(app.config);
    const leadUpserts = new Queue("lead-upsert", {
      connection: redis,
      prefix: queuePrefix(app.config, "lead-upsert"),
    });
    try {
      // Before, the lead-upsert stayed active in its BullMQ slot until its CRM delivery ended.
      const active = (await leadUpserts.getActive()).map((job) => (job.data as { jobId: string }).jobId);
      expect(active).not.toContain(held[1]?.id);
      expect(slow.received).toHaveLength(1);
    } finally {
      await leadUpserts.close();
      redis.disconnect();
    }
    const done = await waitFor(jobs, (rows) => rows.every((row) => row.status === "succeeded"));
    expect(done.map((job) => job.attempts)).toEqual([1, 1]);
    expect(slow.received).toHaveLength(1);
  }, 30_000);
});
