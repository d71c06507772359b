// Provider API answers of the wrong shape (not JSON, wrong types, missing fields), from a fake Yelp and
// Thumbtack on loopback: the attempt is recorded as a retryable provider_bad_response, logged once per
// bad answer with provider and endpoint (no token), and the worker carries on: once the provider
// answers properly, the same job succeeds.
import type { INestApplicationContext } from "@nestjs/common";
import { NestFactory } from "@nestjs/core";
import { RedactingLogger } from "../../src/observability/logger.js";
import { WorkerModule } from "../../src/worker.module.js";
import { adminAs, attemptHistory, OPERATOR_KEY } from "../support/admin.js";
import { type RunningApi, startApi, testConfig } from "../support/app.js";
import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { type FakeServer, startFakeServer } from "../support/fake-server.js";
import { fixture } from "../support/fixtures.js";
import { post } from "../support/http.js";
import { createTenantWithConnection } from "../support/tenants.js";
import { waitFor } from "../support/wait.js";

const YELP_TOKEN = "yelp-platform-token-0123456789";
const REPLY = "Thanks! We will be in touch shortly.";

/** The production JSON logger (redaction included), writing into memory. */
class CapturingLogger extends RedactingLogger {
  readonly lines: string[] = [];
  protected override emit(messages: unknown[], context?: string, logLevel?: string): void {
    this.lines.push(JSON.stringify({ messages, context, logLevel }));
  }
}

describe("provider answers of the wrong shape", () => {
  let db: TestDatabase;
  let api: RunningApi;
  let worker: INestApplicationContext;
  let yelp: FakeServer;
  let thumbtack: FakeServer;
  const logger = new CapturingLogger();
  /** What the fake Yelp answers, per lead id: the lead, and its events. */
  const yelpAnswers = new Map<string, { lead: string; events: string }>();
  /** What the fake Thumbtack answers to a message list, and how long it takes to take a message. */
  let thumbtackMessages = "";
  let thumbtackPostDelayMs = 0;
  /** What the messages list becomes once a reply was POSTed (the provider took it). */
  let thumbtackMessagesAfterPost: string | undefined;

  const validLead = (id: string) => JSON.stringify({ ...fixture("yelp/api-get-lead.json").json, id });
  const validEvents = fixture("yelp/api-lead-events.json").text;

  beforeAll(async () => {
    db = await createTestDatabase();
    yelp = await startFakeServer({ status: 201, text: "{}" }, ({ method, path }) => {
      const match = /^\/v3\/leads\/([^/?]+)(\/events)?/.exec(path);
      const answers = match ? yelpAnswers.get(decodeURIComponent(match[1]!)) : undefined;
      if (method !== "GET" || !answers) return undefined;
      return { status: 200, text: match![2] ? answers.events : answers.lead };
    });
    thumbtack = await startFakeServer({ status: 201, text: "{}" }, ({ method }) => {
      if (method === "GET") return { status: 200, text: thumbtackMessages };
      if (thumbtackMessagesAfterPost !== undefined) thumbtackMessages = thumbtackMessagesAfterPost;
      return { status: 201, text: "{}", delayMs: thumbtackPostDelayMs };
    });
    const config = testConfig(db.url, {
      YELP_WEBHOOK_TOKEN: YELP_TOKEN,
      YELP_API_BASE_URL: yelp.url,
      THUMBTACK_API_BASE_URL: thumbtack.url,
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      // Long enough to see a job `retrying`, short enough to see it succeed after the answers are fixed.
      JOB_BACKOFF_BASE_MS: "1000",
      // Under the Thumbtack reply's 5 s, so that one times out; seconds over a loopback answer on a busy machine.
      SIDE_EFFECT_TIMEOUT_MS: "2000",
      DISPATCHER_INTERVAL_MS: "300",
    });
    api = await startApi(config);
    worker = await NestFactory.createApplicationContext(WorkerModule.forRoot(config), { logger });
    await worker.init();
  });
  afterAll(async () => {
    await worker.close();
    await api.close();
    await Promise.all([yelp.close(), thumbtack.close()]);
    await db.drop();
  });

  const jobOf = (tenantId: string, operation: string) =>
    db.sql
      .query<{ id: string; status: string; attempts: number; last_error_code: string | null }>(
        "SELECT id, status, attempts, last_error_code FROM jobs WHERE tenant_id = $1 AND operation = $2",
        [tenantId, operation],
      )
      .then((result) => result.rows[0]);
  /** The job's finished attempts, as GET /admin/jobs/{id} shows them. */
  const attempts = async (jobId: string) =>
    (await attemptHistory(adminAs(api.url, OPERATOR_KEY), jobId))
      .filter((attempt) => attempt.outcome !== null)
      .map(({ number, outcome, errorCode }) => ({ number, outcome, errorCode }));
  /** The bad-answer log lines for `provider` and `endpoint` since line `from`. */
  const badAnswerLogs = (from: number, provider: string, endpoint: string) =>
    logger.lines
      .slice(from)
      .filter(
        (line) =>
          line.includes('"provider answer of the wrong shape"') &&
          line.includes(`"provider":"${provider}"`) &&
          line.includes(`"endpoint":"${endpoint}"`),
      );

  it.each([
    [
      "events that are not a list",
      "badEvents1",
      { events: '{"events":"nope"}' },
      "GET /v3/leads/{id}/events",
    ],
    [
      "a lead without an id",
      "noLeadId1",
      { lead: '{"user":{"display_name":"Marta K."}}' },
      "GET /v3/leads/{id}",
    ],
    [
      "a lead that is not JSON",
      "notJson1",
      { lead: "<html>Service Unavailable</html>" },
      "GET /v3/leads/{id}",
    ],
  ])(
    "Yelp answers %s: lead-upsert retrying with provider_bad_response, then succeeds",
    async (_what, leadId, bad, endpoint) => {
      const logsFrom = logger.lines.length;
      const token = `yelp-access-token-${leadId}`;
      const accountId = `biz_${leadId}`;
      const c = await createTenantWithConnection(api.app, {
        provider: "yelp",
        externalAccountId: accountId,
        inboundAuth: { type: "none" },
        credentials: { accessToken: token },
      });
      yelpAnswers.set(leadId, { lead: validLead(leadId), events: validEvents, ...bad });
      const delivery = {
        time: "2026-03-14T16:05:42+00:00",
        object: "business",
        data: {
          id: accountId,
          updates: [{ event_type: "NEW_EVENT", event_id: `ev_${leadId}`, lead_id: leadId }],
        },
      };
      expect((await post(`${api.url}/webhooks/yelp/${YELP_TOKEN}`, delivery)).status).toBe(202);

      const retrying = await waitFor(
        () => jobOf(c.tenantId, "lead-upsert"),
        (job) => job?.status === "retrying",
      );
      expect(retrying).toMatchObject({ last_error_code: "provider_bad_response" });
      expect((await attempts(retrying!.id))[0]).toEqual({
        number: 1,
        outcome: "retryable",
        errorCode: "provider_bad_response",
      });
      const view = await adminAs(api.url, OPERATOR_KEY).get(`/admin/jobs/${retrying!.id}`);
      expect(view.status).toBe(200);
      expect(view.body).toMatchObject({
        status: "retrying",
        lastErrorCode: "provider_bad_response",
        attemptHistory: [{ number: 1, outcome: "retryable", errorCode: "provider_bad_response" }],
      });

      // The provider answers properly again: the next attempt of the same job succeeds.
      yelpAnswers.set(leadId, { lead: validLead(leadId), events: validEvents });
      const done = await waitFor(
        () => jobOf(c.tenantId, "lead-upsert"),
        (job) => job?.status === "succeeded",
      );
      const history = await attempts(done!.id);
      expect(history.at(-1)).toMatchObject({ outcome: "succeeded", errorCode: null });
      const badAttempts = history.filter((attempt) => attempt.errorCode === "provider_bad_response");
      // Every attempt before the success met the bad answer (the codes, so a failure says which did not).
      expect(history.slice(0, -1).map((attempt) => attempt.errorCode)).toEqual(
        badAttempts.map(() => "provider_bad_response"),
      );
      const leads = await db.sql.query("SELECT name FROM leads WHERE tenant_id = $1", [c.tenantId]);
      expect(leads.rows).toEqual([{ name: "Marta K." }]);

      // One log line per bad answer, naming provider and endpoint; never the token.
      expect(badAnswerLogs(logsFrom, "yelp", endpoint)).toHaveLength(badAttempts.length);
      expect(logger.lines.join("\n")).not.toContain(token);
    },
  );

  it("Thumbtack lists messages of the wrong shape while reconciling: retried, then reconciled without a second reply", async () => {
    const logsFrom = logger.lines.length;
    const c = await createTenantWithConnection(api.app, {
      provider: "thumbtack",
      inboundAuth: { type: "basic" },
      credentials: { accessToken: "thumbtack-access-token-bad-list" },
      settings: { autoResponse: { enabled: true, text: REPLY } },
    });
    // No message yet, so the reply is sent; it is taken but answered too late (outcome unknown); the
    // list then has a numeric text.
    thumbtackPostDelayMs = 5_000;
    thumbtackMessages = JSON.stringify({ messages: [] });
    thumbtackMessagesAfterPost = JSON.stringify({
      messages: [{ messageID: "m1", from: "Business", text: 7 }],
    });
    const body = fixture("thumbtack/negotiation-created-v4.json").json as { data: object };
    const auth = `Basic ${Buffer.from(`${c.secrets.username}:${c.secrets.password}`).toString("base64")}`;
    await post(
      `${api.url}/webhooks/thumbtack/${c.connectionId}`,
      { ...body, data: { ...body.data, negotiationID: "bad-list-1" } },
      { authorization: auth },
    );
    const job = await waitFor(
      () => jobOf(c.tenantId, "initial-response"),
      (row) => row?.status === "retrying" && row.last_error_code === "provider_bad_response",
    );
    expect(await attempts(job!.id)).toEqual([
      { number: 1, outcome: "retryable", errorCode: "timeout" },
      { number: 2, outcome: "retryable", errorCode: "provider_bad_response" },
    ]);

    thumbtackMessages = JSON.stringify({ messages: [{ messageID: 9, from: "Business", text: REPLY }] });
    await waitFor(
      () => jobOf(c.tenantId, "initial-response"),
      (row) => row?.status === "succeeded",
      30_000,
    );
    expect((await attempts(job!.id)).at(-1)).toMatchObject({ outcome: "succeeded" });
    const record = await db.sql.query("SELECT status, external_ref FROM side_effects WHERE tenant_id = $1", [
      c.tenantId,
    ]);
    expect(record.rows).toEqual([{ status: "succeeded", external_ref: "reconciled" }]);
    const calls = thumbtack.received.filter((request) => request.path.includes("/negotiations/bad-list-1/"));
    expect(calls.map((request) => request.method)).toEqual(["GET", "POST", "GET", "GET"]);
    expect(badAnswerLogs(logsFrom, "thumbtack", "GET /api/v4/negotiations/{id}/messages")).toHaveLength(1);
  }, 40_000);
});
