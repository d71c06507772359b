// Invariants 5 and 6 at real (fake) destinations: retries with backoff, dead and blocked states with
// their attempt history, unknown outcomes reconciled, and work that survives a Redis outage.
import { attemptHistory, OPERATOR_KEY } from "../support/admin.js";
import type { RunningApi } from "../support/app.js";
import { fixture } from "../support/fixtures.js";
import { fakeServer, useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import { freePort } from "../support/process.js";
import { deadRedisEnv } from "../support/redis.js";
import type { TestConnection } from "../support/tenants.js";
import { waitFor } from "../support/wait.js";

const REPLY = "Thanks! We will be in touch shortly.";

describe("side effects under failure", () => {
  let thumbtackMessages: unknown[] = [];
  const thumbtack = useFakeServer({ status: 201, body: {} }, (request) =>
    request.method === "GET" ? { status: 200, body: { messages: thumbtackMessages } } : undefined,
  );
  const app = useApp({
    worker: true,
    env: () => ({
      THUMBTACK_API_BASE_URL: thumbtack.url,
      JOB_BACKOFF_BASE_MS: "50",
      SIDE_EFFECT_TIMEOUT_MS: "2000",
      DISPATCHER_INTERVAL_MS: "300",
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
    }),
  });

  const fakeCrm = () => fakeServer();
  const staticForms = (crmUrl: string) =>
    app.createConnection({
      provider: "staticforms",
      inboundAuth: { type: "bearer" },
      settings: { crmDestination: { url: `${crmUrl}/hook` } },
    });
  const submit = (target: RunningApi, c: TestConnection, id: string) =>
    post(
      `${target.url}/webhooks/staticforms/${c.connectionId}`,
      {
        event: "form.submitted",
        data: { submissionId: id, formData: { name: "Ann", email: "ann@example.test" } },
      },
      { authorization: `Bearer ${c.secrets.bearerToken}` },
    );
  const job = (tenantId: string, operation: string) =>
    app.sql
      .query<{
        id: string;
        status: string;
        attempts: number;
        last_error_code: string | null;
        job_key: string;
      }>(
        "SELECT id, status, attempts, last_error_code, job_key FROM jobs WHERE tenant_id = $1 AND operation = $2",
        [tenantId, operation],
      )
      .then((result) => result.rows);
  /** The job's attempt history, as GET /admin/jobs/{id} shows it. */
  const attempts = async (jobId: string) =>
    (await attemptHistory(app.operator, jobId)).map(({ number, outcome, errorCode }) => ({
      number,
      outcome,
      errorCode,
    }));

  it("CRM answers 503, 503, 200: succeeded on attempt 3, with three attempts in its history", async () => {
    const crm = await fakeCrm();
    crm.reply({ status: 503 }, { status: 503 }, { status: 200 });
    const c = await staticForms(crm.url);
    expect((await submit(app.api, c, "flaky")).status).toBe(202);
    const [row] = await waitFor(
      () => job(c.tenantId, "crm-delivery"),
      ([r]) => r?.status === "succeeded",
    );
    expect(row).toMatchObject({ attempts: 3, last_error_code: "http_503" });
    expect(await attempts(row!.id)).toEqual([
      { number: 1, outcome: "retryable", errorCode: "http_503" },
      { number: 2, outcome: "retryable", errorCode: "http_503" },
      { number: 3, outcome: "succeeded", errorCode: null },
    ]);
    expect(new Set(crm.received.map((request) => request.headers["webhook-id"]))).toEqual(
      new Set([row!.job_key]),
    );
  });

  it("CRM answers 400: dead after one attempt, receipt and job kept", async () => {
    const crm = await fakeCrm();
    crm.reply({ status: 400 });
    const c = await staticForms(crm.url);
    const answer = await submit(app.api, c, "rejected");
    const [row] = await waitFor(
      () => job(c.tenantId, "crm-delivery"),
      ([r]) => r?.status === "dead",
    );
    expect(row).toMatchObject({ attempts: 1, last_error_code: "http_400" });
    expect(await attempts(row!.id)).toEqual([{ number: 1, outcome: "permanent", errorCode: "http_400" }]);
    await app.settled(); // no retry pending, and a dispatcher pass has not handed it over again
    expect(crm.received).toHaveLength(1);
    const receipts = await app.sql.query("SELECT id FROM receipts WHERE id = $1", [
      answer.body.receiptIds[0],
    ]);
    expect(receipts.rowCount).toBe(1);
  });

  it("CRM hangs past the timeout: retried, and the CRM sees the same webhook-id both times", async () => {
    const crm = await fakeCrm();
    crm.reply({ status: 200, delayMs: 5_000 });
    const c = await staticForms(crm.url);
    await submit(app.api, c, "slow");
    const [row] = await waitFor(
      () => job(c.tenantId, "crm-delivery"),
      ([r]) => r?.status === "succeeded",
    );
    expect(await attempts(row!.id)).toEqual([
      { number: 1, outcome: "retryable", errorCode: "timeout" },
      { number: 2, outcome: "succeeded", errorCode: null },
    ]);
    expect(crm.received.map((request) => request.headers["webhook-id"])).toEqual([
      row!.job_key,
      row!.job_key,
    ]);
    const leads = await app.sql.query("SELECT count(*)::int AS n FROM leads WHERE tenant_id = $1", [
      c.tenantId,
    ]);
    expect(leads.rows).toEqual([{ n: 1 }]);
  });

  it("provider API answers 401: connection credential_error, job blocked, no more calls", async () => {
    const c = await app.createConnection({
      provider: "thumbtack",
      inboundAuth: { type: "basic" },
      credentials: { accessToken: "revoked-token" },
      settings: { autoResponse: { enabled: true, text: REPLY } },
    });
    const auth = {
      authorization: `Basic ${Buffer.from(`${c.secrets.username}:${c.secrets.password}`).toString("base64")}`,
    };
    const negotiation = (id: string) => {
      const body = fixture("thumbtack/negotiation-created-v4.json").json as { data: object };
      return { ...body, data: { ...body.data, negotiationID: id } };
    };
    thumbtack.reply({ status: 401 });
    const callsBefore = thumbtack.received.length;
    await post(`${app.url}/webhooks/thumbtack/${c.connectionId}`, negotiation("cred-1"), auth);
    await waitFor(
      () => job(c.tenantId, "initial-response"),
      ([r]) => r?.status === "blocked",
    );
    const connection = await app.sql.query("SELECT status FROM connections WHERE id = $1", [c.connectionId]);
    expect(connection.rows).toEqual([{ status: "credential_error" }]);

    // Another lead on the same connection: stored, its reply job blocked without calling the provider.
    expect(
      (await post(`${app.url}/webhooks/thumbtack/${c.connectionId}`, negotiation("cred-2"), auth)).status,
    ).toBe(202);
    const rows = await waitFor(
      () => job(c.tenantId, "initial-response"),
      (list) => list.length === 2 && list.every((r) => r.status === "blocked"),
    );
    expect(rows.map((r) => r.status)).toEqual(["blocked", "blocked"]);
    expect(thumbtack.received.length - callsBefore).toBe(1);
  });

  it("the reply's outcome is unknown (timeout): the retry finds our message and does not send again", async () => {
    const c = await app.createConnection({
      provider: "thumbtack",
      inboundAuth: { type: "basic" },
      credentials: { accessToken: "good-token" },
      settings: { autoResponse: { enabled: true, text: REPLY } },
    });
    const auth = {
      authorization: `Basic ${Buffer.from(`${c.secrets.username}:${c.secrets.password}`).toString("base64")}`,
    };
    const body = fixture("thumbtack/negotiation-created-v4.json").json as { data: object };
    // No message yet, so the reply is sent; the provider takes it but answers too late; afterwards it lists it.
    thumbtack.reply({ status: 200, body: { messages: [] } }, { status: 201, delayMs: 5_000 });
    thumbtackMessages = [{ messageID: "m-ours", from: "Business", text: REPLY }];
    await post(
      `${app.url}/webhooks/thumbtack/${c.connectionId}`,
      { ...body, data: { ...body.data, negotiationID: "slow-1" } },
      auth,
    );
    const [row] = await waitFor(
      () => job(c.tenantId, "initial-response"),
      ([r]) => r?.status === "succeeded",
    );
    expect(await attempts(row!.id)).toEqual([
      { number: 1, outcome: "retryable", errorCode: "timeout" },
      { number: 2, outcome: "succeeded", errorCode: null },
    ]);
    const calls = thumbtack.received.filter((request) =>
      request.path.startsWith("/api/v4/negotiations/slow-1/messages"),
    );
    expect(calls.map((request) => request.method)).toEqual(["GET", "POST", "GET"]);
    const record = await app.sql.query("SELECT status, external_ref FROM side_effects WHERE job_key = $1", [
      row!.job_key,
    ]);
    expect(record.rows).toEqual([{ status: "succeeded", external_ref: "reconciled" }]);
  });

  it("Redis down while deliveries arrive: 202s; two workers' dispatchers enqueue them later; every job succeeds once", async () => {
    const crm = await fakeCrm();
    const c = await staticForms(crm.url);
    // A second worker replica: both dispatchers and both sets of BullMQ workers race for the backlog.
    const secondWorker = await app.startWorker();
    const noRedis = await app.startApi(deadRedisEnv(await freePort()));
    try {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) => submit(noRedis, c, `outage-${i}`)),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(202));
    } finally {
      await noRedis.close();
    }
    const rows = await waitFor(
      () => job(c.tenantId, "crm-delivery"),
      (list) => list.length === 10 && list.every((r) => r.status === "succeeded"),
    );
    expect(rows.every((r) => r.attempts === 1)).toBe(true);
    const ids = crm.received.map((request) => request.headers["webhook-id"]);
    expect(ids).toHaveLength(10);
    expect(new Set(ids).size).toBe(10);
    const upserts = await job(c.tenantId, "lead-upsert");
    expect(upserts.map((r) => r.status)).toEqual(Array(10).fill("succeeded"));
    const leads = await app.sql.query("SELECT count(*)::int AS n FROM leads WHERE tenant_id = $1", [
      c.tenantId,
    ]);
    expect(leads.rows).toEqual([{ n: 10 }]);
    await secondWorker.close();
  });
});
