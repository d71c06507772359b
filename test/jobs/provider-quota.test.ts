// Provider quotas (PROVIDER_RATE_LIMITS): outbound calls are paced by budgets counted in Redis and
// shared by every tenant and worker process, as measured by a fake Yelp on loopback (its own arrival
// times); a call over a budget, or a provider's 429 with Retry-After, makes the job `waiting`
// (`quota`) without using an attempt. The pacing runs on two worker processes from dist/ (`npm test`
// builds it first), so that this process (the API, the fake Yelp and its clock) stays idle.
import { randomBytes } from "node:crypto";
import type { ReceivedRequest } from "../support/fake-server.js";
import { fixture } from "../support/fixtures.js";
import { type TestApp, useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import type { Spawned } from "../support/process.js";
import type { TestConnection } from "../support/tenants.js";
import { waitFor } from "../support/wait.js";

const YELP_TOKEN = "yelp-platform-token-0123456789";
const LEAD = /^\/v3\/leads\/[^/?]+$/;
const EVENTS = /^\/v3\/leads\/[^/?]+\/events/;

/** A fake Yelp API: every lead exists, with no events; `answers` scripts a lead's first answers. */
function useFakeYelp(answers = new Map<string, { status: number; headers: Record<string, string> }[]>()) {
  return useFakeServer({ status: 201, body: {} }, ({ method, path }) => {
    const match = /^\/v3\/leads\/([^/?]+)(\/events)?/.exec(path);
    if (!match || method !== "GET") return undefined;
    const scripted = answers.get(match[1]!)?.shift();
    if (scripted) return { ...scripted, body: { error: { code: "TOO_MANY_REQUESTS_PER_SECOND" } } };
    if (match[2]) return { status: 200, body: { events: [] } };
    return { status: 200, body: { ...fixture("yelp/api-get-lead.json").json, id: match[1] } };
  });
}

function yelpConnection(app: TestApp): Promise<TestConnection & { businessId: string }> {
  const businessId = `biz_${randomBytes(8).toString("hex")}`;
  return app
    .createConnection({
      provider: "yelp",
      inboundAuth: { type: "none" },
      externalAccountId: businessId,
      credentials: { accessToken: `token-${businessId}` },
    })
    .then((connection) => ({ ...connection, businessId }));
}

/** One Yelp delivery of NEW_EVENTs, one per lead id. */
function deliver(app: TestApp, businessId: string, leadIds: string[]) {
  const updates = leadIds.map((leadId) => ({
    event_type: "NEW_EVENT",
    event_id: `ev_${randomBytes(8).toString("hex")}`,
    lead_id: leadId,
    interaction_time: "2026-11-30T20:00:00+00:00",
  }));
  const body = { time: "2026-11-30T20:00:01+00:00", object: "business", data: { id: businessId, updates } };
  return post(`${app.url}/webhooks/yelp/${YELP_TOKEN}`, body);
}

interface JobRow {
  id: string;
  status: string;
  attempts: number;
  waiting_for: string | null;
  next_attempt_at: Date;
}
const jobsOf = (app: TestApp, tenantIds: string[]) =>
  app.sql
    .query<JobRow>(
      "SELECT id, status, attempts, waiting_for, next_attempt_at FROM jobs WHERE tenant_id = ANY($1::uuid[])",
      [tenantIds],
    )
    .then((result) => result.rows);
const succeeded = (app: TestApp, tenantIds: string[]) =>
  app.sql
    .query<{ n: number }>(
      "SELECT count(*)::int AS n FROM jobs WHERE tenant_id = ANY($1::uuid[]) AND status = 'succeeded'",
      [tenantIds],
    )
    .then((result) => result.rows[0]!.n);
/** The attempt rows of the tenants' jobs: their failed and abandoned attempts (a success is on its job's row). */
const attemptsOf = (app: TestApp, tenantIds: string[]) =>
  app.sql
    .query<{ job_id: string; outcome: string | null; error_code: string | null }>(
      "SELECT job_id, outcome, error_code FROM job_attempts WHERE tenant_id = ANY($1::uuid[])",
      [tenantIds],
    )
    .then((result) => result.rows);

/** The most calls that arrived within any window of one second (`at` is the fake's own clock). */
function busiestSecond(calls: ReceivedRequest[]): number {
  const times = calls.map((call) => call.at).sort((a, b) => a - b);
  let most = 0;
  for (let first = 0, last = 0; last < times.length; last++) {
    while (times[last]! - times[first]! >= 1000) first++;
    most = Math.max(most, last - first + 1);
  }
  return most;
}

describe("provider quotas: per-second pacing and a provider's 429", () => {
  const scripted = new Map<string, { status: number; headers: Record<string, string> }[]>();
  const yelp = useFakeYelp(scripted);
  const app = useApp({
    env: () => ({
      YELP_WEBHOOK_TOKEN: YELP_TOKEN,
      YELP_API_BASE_URL: yelp.url,
      PROVIDER_RATE_LIMITS: "yelp=5/s",
      SIDE_EFFECT_TIMEOUT_MS: "5000",
      DISPATCHER_INTERVAL_MS: "300",
    }),
  });
  const workers: Spawned[] = [];
  beforeAll(async () => {
    // LOG_LEVEL=debug: each worker logs every job it finishes (which shows that both took part).
    workers.push(
      app.spawn("dist/worker.js", { LOG_LEVEL: "debug" }),
      app.spawn("dist/worker.js", { LOG_LEVEL: "debug" }),
    );
    await Promise.all(workers.map((worker) => worker.waitFor(/worker started/)));
  });

  it("200 Yelp events of 3 tenants on 2 worker processes: at most 5 calls per second per endpoint, every job succeeds on its first attempt", async () => {
    const tenants = await Promise.all([yelpConnection(app), yelpConnection(app), yelpConnection(app)]);
    // Each event's lead-upsert calls two endpoints (the lead, its events): 200 calls each, about 40 s at 5/s.
    const leadIds = Array.from({ length: 200 }, (_, i) => `pace_${i}`);
    // 20 deliveries of 10 events, the tenants taking turns.
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        deliver(app, tenants[i % 3]!.businessId, leadIds.slice(i * 10, i * 10 + 10)),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(202));
    const tenantIds = tenants.map((tenant) => tenant.tenantId);

    await waitFor(
      () => succeeded(app, tenantIds),
      (n) => n === 200,
      80_000,
    );
    const jobs = await jobsOf(app, tenantIds);
    expect(jobs).toHaveLength(200);
    expect(jobs.every((job) => job.status === "succeeded" && job.attempts === 1)).toBe(true);
    // No attempt failed (a success is on its job row: only the others have attempt rows).
    expect(await attemptsOf(app, tenantIds)).toEqual([]);

    const leadCalls = yelp.received.filter((call) => call.method === "GET" && LEAD.test(call.path));
    const eventCalls = yelp.received.filter((call) => call.method === "GET" && EVENTS.test(call.path));
    expect(leadCalls.length).toBeGreaterThanOrEqual(200);
    expect(eventCalls.length).toBeGreaterThanOrEqual(200);
    expect(busiestSecond(leadCalls)).toBeLessThanOrEqual(5);
    expect(busiestSecond(eventCalls)).toBeLessThanOrEqual(5);
    // Both workers took part (each logs the jobs it finishes).
    for (const worker of workers) expect(worker.output()).toMatch(/job succeeded/);
  }, 100_000);

  it.each([
    ["seconds", () => "2"],
    ["an HTTP date", () => new Date(Date.now() + 3_000).toUTCString()],
  ])(
    "a 429 with Retry-After (%s): the job waits (quota) until then, then succeeds with no failed attempt",
    async (_, retryAfter) => {
      const { tenantId, businessId } = await yelpConnection(app);
      const leadId = `limited_${randomBytes(4).toString("hex")}`;
      // The header is written when the fake answers (a getter): an HTTP date made before the delivery
      // would leave less than its 2–3 s once the worker's first call comes.
      scripted.set(leadId, [
        {
          status: 429,
          get headers() {
            return { "retry-after": retryAfter() };
          },
        },
      ]);
      const sentAt = Date.now();
      expect((await deliver(app, businessId, [leadId])).status).toBe(202);

      const [waiting] = await waitFor(
        () => jobsOf(app, [tenantId]),
        (rows) => rows[0]?.status === "waiting",
      );
      expect(waiting).toMatchObject({ status: "waiting", waiting_for: "quota", attempts: 0 });
      expect(waiting!.next_attempt_at.getTime()).toBeGreaterThan(sentAt + 500);
      expect(await attemptsOf(app, [tenantId])).toEqual([]);

      const [done] = await waitFor(
        () => jobsOf(app, [tenantId]),
        (rows) => rows[0]?.status === "succeeded",
      );
      expect(done).toMatchObject({ status: "succeeded", attempts: 1, waiting_for: null });
      expect(await attemptsOf(app, [tenantId])).toEqual([]);
      const leadCalls = yelp.received.filter((call) => call.path === `/v3/leads/${leadId}`);
      expect(leadCalls).toHaveLength(2);
      // The second call came after the Retry-After, by the fake's own clock.
      expect(leadCalls[1]!.at - leadCalls[0]!.at).toBeGreaterThanOrEqual(1_000);
    },
    20_000,
  );
});

describe("provider quotas: a daily budget", () => {
  const yelp = useFakeYelp();
  const app = useApp({
    worker: true,
    env: () => ({
      YELP_WEBHOOK_TOKEN: YELP_TOKEN,
      YELP_API_BASE_URL: yelp.url,
      // One event takes two calls (the lead and its events): the budget covers one event.
      PROVIDER_RATE_LIMITS: "yelp-daily=2",
      DISPATCHER_INTERVAL_MS: "300",
    }),
  });

  it("exhausted: the next job waits (quota) until the day's budget renews, neither failed nor dead", async () => {
    const { tenantId, businessId } = await yelpConnection(app);
    expect((await deliver(app, businessId, ["daily_1"])).status).toBe(202);
    await waitFor(
      () => jobsOf(app, [tenantId]),
      (rows) => rows[0]?.status === "succeeded",
    );
    expect((await deliver(app, businessId, ["daily_2"])).status).toBe(202);
    const jobs = await waitFor(
      () => jobsOf(app, [tenantId]),
      (rows) => rows.some((job) => job.status === "waiting"),
    );
    const waiting = jobs.find((job) => job.status === "waiting")!;
    expect(waiting).toMatchObject({ waiting_for: "quota", attempts: 0 });
    // Until the budget's day is over: about 24 h from its first call.
    expect(waiting.next_attempt_at.getTime()).toBeGreaterThan(Date.now() + 23 * 3_600_000);
    await app.settled();
    expect((await jobsOf(app, [tenantId])).map((job) => job.status).sort()).toEqual(["succeeded", "waiting"]);
    expect(await attemptsOf(app, [tenantId])).toEqual([]);
    expect(yelp.received.filter((call) => call.path.includes("daily_2"))).toEqual([]);
    expect(yelp.received).toHaveLength(2);
  });
});
