// Replay through the admin API, end to end: the real API and worker, a CRM as a real HTTP server.
// A replay reuses the job key, so the CRM sees the same `webhook-id` (its idempotency key) again.
import {
  adminAs,
  attemptHistory,
  createTenant,
  OPERATOR_KEY,
  staticFormsDelivery,
  staticFormsToCrm,
} from "../support/admin.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import { waitFor } from "../support/wait.js";

const RATE = 100;

describe("admin API: replay", () => {
  /** Status the fake CRM answers, per path (default 200). */
  const answers = new Map<string, number>();
  /** Milliseconds the fake CRM holds a call before answering, per path (default none). */
  const delays = new Map<string, number>();
  const crm = useFakeServer({ status: 200, body: {} }, (request) => ({
    status: answers.get(request.path) ?? 200,
    delayMs: delays.get(request.path),
  }));
  const app = useApp({
    worker: true,
    env: {
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      JOB_BACKOFF_BASE_MS: "50",
      REPLAY_RATE_PER_SECOND: String(RATE),
      DISPATCHER_INTERVAL_MS: "300",
    },
  });
  let tenant: Awaited<ReturnType<typeof createTenant>>;

  beforeAll(async () => {
    tenant = await createTenant(app.url);
  });

  const connect = async (crmPath: string) => {
    const connection = await staticFormsToCrm(tenant.admin, app.url, crm.url, crmPath);
    return {
      ...connection,
      deliver: (submissionId?: string, target = app.api) => connection.deliver(submissionId, target.url),
    };
  };
  const crmJobs = async (connectionId: string) =>
    (
      await app.sql.query<{ id: string; status: string; job_key: string }>(
        "SELECT id, status, job_key FROM jobs WHERE connection_id = $1 AND operation = 'crm-delivery' ORDER BY created_at",
        [connectionId],
      )
    ).rows;
  /** The job's attempts as GET /admin/jobs/{id} lists them: [number, outcome]. */
  const historyOf = async (jobId: string) =>
    (await attemptHistory(tenant.admin, jobId)).map((a) => [a.number, a.outcome]);
  const webhookIds = (path: string) =>
    crm.received.filter((request) => request.path === path).map((request) => request.headers["webhook-id"]);

  it("a dead job replayed succeeds, and the CRM sees the same idempotency key both times", async () => {
    answers.set("/one", 422);
    const connection = await connect("/one");
    expect((await connection.deliver()).status).toBe(202);
    const [dead] = await waitFor(
      () => crmJobs(connection.id),
      ([job]) => job?.status === "dead",
    );
    answers.set("/one", 200);
    const replayed = await tenant.admin.post(`/admin/jobs/${dead!.id}/replay`);
    expect([replayed.status, replayed.body.job.id]).toEqual([202, dead!.id]);
    await waitFor(
      () => crmJobs(connection.id),
      ([job]) => job?.status === "succeeded",
    );
    expect(webhookIds("/one")).toEqual([dead!.job_key, dead!.job_key]);
    expect(await historyOf(dead!.id)).toEqual([
      [1, "permanent"],
      [2, "succeeded"],
    ]);

    const again = await tenant.admin.post(`/admin/jobs/${dead!.id}/replay`, {});
    expect([again.status, again.body.error]).toEqual([409, "job_succeeded"]);
    const forced = await tenant.admin.post(`/admin/jobs/${dead!.id}/replay`, { force: true });
    expect(forced.status).toBe(202);
    await waitFor(
      () => Promise.resolve(webhookIds("/one")),
      (ids) => ids.length === 3,
    );
    expect(new Set(webhookIds("/one"))).toEqual(new Set([dead!.job_key]));
    // The success that the forced replay left is in the history, and so is the one after it.
    await waitFor(
      () => crmJobs(connection.id),
      ([job]) => job?.status === "succeeded",
    );
    expect(await historyOf(dead!.id)).toEqual([
      [1, "permanent"],
      [2, "succeeded"],
      [3, "succeeded"],
    ]);
    const audit = await app.sql.query(
      "SELECT action, api_key_id, details->>'from' AS from FROM audit_entries WHERE target_id = $1 ORDER BY created_at",
      [dead!.id],
    );
    expect(audit.rows).toEqual([
      { action: "job.replay", api_key_id: tenant.keyId, from: "dead" },
      { action: "job.replay", api_key_id: tenant.keyId, from: "succeeded" },
    ]);
  });

  it("a job still running or waiting for a retry cannot be replayed (409); a receipt replays only what did not succeed", async () => {
    // The CRM holds this connection's call: its delivery is running meanwhile.
    delays.set("/two", 3_000);
    const slow = await connect("/two");
    expect((await slow.deliver("sub_running")).status).toBe(202);
    const [running] = await waitFor(
      () => crmJobs(slow.id),
      ([job]) => job?.status === "running",
    );
    const refused = await tenant.admin.post(`/admin/jobs/${running!.id}/replay`);
    expect([refused.status, refused.body.error]).toEqual([409, "job_in_progress"]);
    expect((await crmJobs(slow.id))[0]!.status).toBe("running");
    delays.delete("/two");
    // Waiting for a retry (set here by SQL once the call has finished, a state no answer leaves for long): refused too.
    await waitFor(
      () => crmJobs(slow.id),
      ([job]) => job?.status === "succeeded",
    );
    await app.sql.query(
      "UPDATE jobs SET status = 'retrying', next_attempt_at = now() + interval '1 hour' WHERE id = $1",
      [running!.id],
    );
    const retrying = await tenant.admin.post(`/admin/jobs/${running!.id}/replay`);
    expect([retrying.status, retrying.body.error]).toEqual([409, "job_in_progress"]);
    expect((await crmJobs(slow.id))[0]!.status).toBe("retrying");

    answers.set("/three", 400);
    const connection = await connect("/three");
    const delivered = await connection.deliver();
    await waitFor(
      () => crmJobs(connection.id),
      ([job]) => job?.status === "dead",
    );
    answers.set("/three", 200);
    const receiptId = delivered.body.receiptIds[0]!;
    const replayed = await tenant.admin.post(`/admin/receipts/${receiptId}/replay`);
    // Only the CRM delivery: the lead upsert succeeded the first time.
    expect([replayed.status, replayed.body.jobs.map((job: { operation: string }) => job.operation)]).toEqual([
      202,
      ["crm-delivery"],
    ]);
    await waitFor(
      () => crmJobs(connection.id),
      ([job]) => job?.status === "succeeded",
    );
    const receipt = await tenant.admin.get(`/admin/receipts/${receiptId}`);
    expect(receipt.body.jobs.map((job: { status: string }) => job.status)).toEqual([
      "succeeded",
      "succeeded",
    ]);
    const audit = await app.sql.query("SELECT action, api_key_id FROM audit_entries WHERE target_id = $1", [
      receiptId,
    ]);
    expect(audit.rows).toEqual([{ action: "receipt.replay", api_key_id: tenant.keyId }]);
  });

  it("an operator's replay across tenants is in each tenant's audit log, naming the operator's key", async () => {
    const from = new Date().toISOString();
    const tenants = [await createTenant(app.url), await createTenant(app.url)];
    const dead: string[] = [];
    for (const [i, t] of tenants.entries()) {
      const path = `/cross-${i}`;
      answers.set(path, 400);
      const created = await t.admin.post("/admin/connections", {
        provider: "staticforms",
        externalAccountId: `cross-${i}-${from}`,
        displayName: path,
        inboundAuth: { type: "bearer" },
        settings: { crmDestination: { url: `${crm.url}${path}` } },
      });
      const url = `${app.url}/webhooks/staticforms/${created.body.connection.id}`;
      const auth = { authorization: `Bearer ${created.body.secrets.bearerToken}` };
      for (let n = 0; n <= i; n++) expect((await post(url, staticFormsDelivery(), auth)).status).toBe(202);
      const jobs = await waitFor(
        () => crmJobs(created.body.connection.id as string),
        (rows) => rows.length === i + 1 && rows.every((job) => job.status === "dead"),
      );
      dead.push(...jobs.map((job) => job.id));
    }
    const operator = adminAs(app.url, OPERATOR_KEY);
    const started = await operator.post("/admin/replays", {
      filter: { status: "dead", operation: "crm-delivery", from },
    });
    expect([started.status, started.body.matched]).toEqual([202, 3]);

    const operatorKeyId = (await app.sql.query<{ id: string }>("SELECT id FROM api_keys WHERE bootstrap"))
      .rows[0]!.id;
    for (const [i, t] of tenants.entries()) {
      const audit = await t.admin.get("/admin/audit");
      const entries = audit.body.items.filter(
        (entry: { action: string }) => entry.action === "replay.create",
      );
      expect(entries).toEqual([
        expect.objectContaining({
          tenantId: t.tenantId,
          apiKeyId: operatorKeyId,
          targetId: started.body.id,
          details: expect.objectContaining({ matched: i + 1 }),
        }),
      ]);
    }
    const platform = await app.sql.query(
      "SELECT tenant_id, (details->>'matched')::int AS matched FROM audit_entries WHERE target_id = $1 AND tenant_id IS NULL",
      [started.body.id],
    );
    expect(platform.rows).toEqual([{ tenant_id: null, matched: 3 }]);
  });

  it("a bulk replay of 500 dead jobs filtered on one connection re-runs exactly the matching ones, paced", async () => {
    answers.set("/bulk-x", 400);
    answers.set("/bulk-y", 400);
    const x = await connect("/bulk-x");
    const y = await connect("/bulk-y");
    for (let i = 0; i < 250; i += 50) {
      const range = Array.from({ length: 50 }, (_, n) => i + n);
      const answers = await Promise.all(
        range.flatMap((n) => [x.deliver(`sub_x_${n}`), y.deliver(`sub_y_${n}`)]),
      );
      expect(answers.every((answer) => answer.status === 202)).toBe(true);
    }
    const deadOf = async (id: string) => (await crmJobs(id)).filter((job) => job.status === "dead");
    await waitFor(
      () => deadOf(x.id),
      (jobs) => jobs.length === 250,
      60_000,
    );
    await waitFor(
      () => deadOf(y.id),
      (jobs) => jobs.length === 250,
      60_000,
    );
    answers.set("/bulk-x", 200);
    answers.set("/bulk-y", 200);
    const firstIdsOfX = new Set(webhookIds("/bulk-x"));
    const filter = { status: "dead", operation: "crm-delivery", connectionId: x.id };

    const dry = await tenant.admin.post("/admin/replays", { filter, dryRun: true });
    expect([dry.status, dry.body.matched, dry.body.sample.length]).toEqual([200, 250, 10]);
    expect(dry.body.sample.every((job: { connectionId: string }) => job.connectionId === x.id)).toBe(true);
    // What a dry run must not start would run by now: a dispatcher pass, and the queues empty.
    await app.settled();
    expect((await deadOf(x.id)).length).toBe(250);
    const batches = await app.sql.query(
      "SELECT count(*)::int AS n FROM replay_batches WHERE tenant_id = $1",
      [tenant.tenantId],
    );
    expect(batches.rows).toEqual([{ n: 0 }]);
    expect(webhookIds("/bulk-x").length).toBe(250);

    // Another tenant's key matches none of these jobs.
    const other = await createTenant(app.url);
    expect(
      (await other.admin.post("/admin/replays", { filter: { status: "dead" }, dryRun: true })).body.matched,
    ).toBe(0);

    const started = await tenant.admin.post("/admin/replays", { filter });
    expect([started.status, started.body.matched]).toEqual([202, 250]);
    const progress = await waitFor(
      () => tenant.admin.get(`/admin/replays/${started.body.id}`),
      (answer) => answer.body.status === "done",
      60_000,
    );
    expect(progress.body).toMatchObject({
      status: "done",
      matched: 250,
      queued: 250,
      skipped: 0,
      succeeded: 250,
      failed: 0,
    });
    expect((await crmJobs(x.id)).every((job) => job.status === "succeeded")).toBe(true);
    expect((await deadOf(y.id)).length).toBe(250);
    // Each replayed delivery reached the CRM once more, under its original webhook-id; Y got nothing new.
    const replayed = webhookIds("/bulk-x").slice(250);
    expect(replayed.length).toBe(250);
    expect(new Set(replayed)).toEqual(firstIdsOfX);
    expect(webhookIds("/bulk-y").length).toBe(250);
    // Paced: at most RATE jobs a second were re-queued, so the CRM saw them over at least 250 / RATE - 1 s.
    const times = crm.received.filter((request) => request.path === "/bulk-x").slice(250);
    expect(times.length).toBe(250);
    expect(times.at(-1)!.at - times[0]!.at).toBeGreaterThanOrEqual((250 / RATE - 0.5) * 1000);
    const audit = await app.sql.query(
      "SELECT action, api_key_id, (details->>'matched')::int AS matched FROM audit_entries WHERE target_id = $1",
      [started.body.id],
    );
    expect(audit.rows).toEqual([{ action: "replay.create", api_key_id: tenant.keyId, matched: 250 }]);
  }, 120_000);

  it("a bulk replay (or its dry run) naming another tenant's or an unknown connection, or an unknown tenant, is 404 and writes nothing", async () => {
    const other = await createTenant(app.url);
    const theirs = await other.admin.post("/admin/connections", {
      provider: "staticforms",
      externalAccountId: "replay-404-form",
      displayName: "Their form",
      inboundAuth: { type: "bearer" },
    });
    const writes = async () =>
      (
        await app.sql.query<{ batches: number; audit: number }>(
          `SELECT (SELECT count(*)::int FROM replay_batches) AS batches,
                  (SELECT count(*)::int FROM audit_entries WHERE action = 'replay.create') AS audit`,
        )
      ).rows[0];
    const before = await writes();
    const unknown = "00000000-0000-4000-8000-000000000000";
    for (const [admin, filter, what] of [
      [tenant.admin, { connectionId: theirs.body.connection.id }, "connection"],
      [tenant.admin, { connectionId: unknown }, "connection"],
      [app.operator, { connectionId: unknown }, "connection"],
      [app.operator, { tenantId: unknown }, "tenant"],
      [app.operator, { tenantId: tenant.tenantId, connectionId: theirs.body.connection.id }, "connection"],
    ] as const) {
      for (const dryRun of [true, false]) {
        const answer = await admin.post("/admin/replays", { filter, dryRun });
        expect([what, dryRun, answer.status, answer.body.error]).toEqual([what, dryRun, 404, "not_found"]);
      }
    }
    expect(await writes()).toEqual(before);
  });

  it("errorCode narrows the job list and a bulk replay to one failures group; a malformed one is 400", async () => {
    answers.set("/codes", 400);
    const c = await connect("/codes");
    for (let n = 0; n < 6; n++) expect((await c.deliver(`sub_codes_${n}`)).status).toBe(202);
    const dead = await waitFor(
      async () => (await crmJobs(c.id)).filter((job) => job.status === "dead"),
      (jobs) => jobs.length === 6,
      30_000,
    );
    // Two of the six died of another error, as a 400 and a 422 from the same CRM would group apart.
    const other = dead.slice(0, 2).map((job) => job.id);
    await app.sql.query("UPDATE jobs SET last_error_code = 'http_422' WHERE id = ANY($1::uuid[])", [other]);
    const list = await tenant.admin.get(`/admin/jobs?connectionId=${c.id}&status=dead&errorCode=http_422`);
    expect(list.status).toBe(200);
    expect(list.body.items.map((job: { id: string }) => job.id).sort()).toEqual([...other].sort());

    answers.set("/codes", 200);
    const filter = { status: "dead", operation: "crm-delivery", connectionId: c.id, errorCode: "http_422" };
    const dry = await tenant.admin.post("/admin/replays", { filter, dryRun: true });
    expect([dry.status, dry.body.matched]).toEqual([200, 2]);
    const started = await tenant.admin.post("/admin/replays", { filter });
    expect([started.status, started.body.matched]).toEqual([202, 2]);
    await waitFor(
      () => tenant.admin.get(`/admin/replays/${started.body.id}`),
      (answer) => answer.body.status === "done",
      30_000,
    );
    const after = await crmJobs(c.id);
    expect(
      after
        .filter((job) => job.status === "succeeded")
        .map((job) => job.id)
        .sort(),
    ).toEqual([...other].sort());
    expect(after.filter((job) => job.status === "dead")).toHaveLength(4);

    for (const bad of ["HTTP 400", "x".repeat(65)]) {
      expect((await tenant.admin.get(`/admin/jobs?errorCode=${encodeURIComponent(bad)}`)).status).toBe(400);
      const refused = await tenant.admin.post("/admin/replays", { filter: { errorCode: bad }, dryRun: true });
      expect([refused.status, refused.body.error]).toEqual([400, "validation_failed"]);
    }
  });
});
