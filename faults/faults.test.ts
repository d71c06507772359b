// The fault-injection suite (`npm run test:faults`): Leadgate as deployed (API and worker processes
// from dist/) on a Postgres and a Redis of the suite's own, which it kills and restarts under load.
// Each scenario prints its counts and asserts that nothing acknowledged was lost and nothing was
// done twice. Thumbtack negotiations exercise every side effect: the lead upsert, the auto-reply
// through the (fake) Thumbtack API, and the CRM delivery.
import { randomBytes } from "node:crypto";
import type pg from "pg";
import { startFakeServer, type FakeServer } from "../test/support/fake-server.js";
import { fixture } from "../test/support/fixtures.js";
import { waitFor } from "../test/support/wait.js";
import { Leadgate, OPERATOR_KEY, Services, type Process } from "./support/cluster.js";
import { type Delivery, isSuccess, type Outcome, retryUntilAccepted, sendAll } from "./support/load.js";
import { count, report } from "./support/verify.js";

const REPLY = "Thanks! We will call you within the hour.";

describe("fault injection", () => {
  let services: Services;
  let thumbtack: FakeServer;
  let crm: FakeServer;
  /** Messages the fake Thumbtack API holds per negotiation (so a reply's outcome can be looked up). */
  const conversations = new Map<string, { from: string; text: string }[]>();
  /** How long the fake Thumbtack API takes to take a reply (slow: a worker has replies in flight). */
  let replyDelayMs = 0;

  beforeAll(async () => {
    services = await Services.start();
    thumbtack = await startFakeServer({ status: 201, body: {} }, (request) => {
      const id = /negotiations\/([^/]+)\/messages/.exec(request.path)?.[1];
      if (!id) return undefined;
      const messages = conversations.get(id) ?? [];
      if (request.method === "GET") return { status: 200, body: { messages } };
      messages.push({ from: "Business", text: (JSON.parse(request.body) as { text: string }).text });
      conversations.set(id, messages);
      return { status: 201, body: { messageID: randomBytes(4).toString("hex") }, delayMs: replyDelayMs };
    });
    crm = await startFakeServer({ status: 200, body: {} });
  }, 120_000);
  afterAll(async () => {
    await Promise.all([thumbtack?.close(), crm?.close()]);
    await services?.stop();
  });

  interface Scenario {
    lg: Leadgate;
    sql: pg.Pool;
    deliveries: Delivery[];
    outcomes: Map<string, Outcome>;
    api: Process;
  }

  /** A database, processes, a tenant with a Thumbtack connection, and `events` deliveries ready to send. */
  async function scenario(events: number, env: Record<string, string> = {}): Promise<Scenario> {
    thumbtack.received.length = 0;
    crm.received.length = 0;
    const { url, sql } = await services.database();
    // The longest reconciliation schedule: no scheduled run lands among the jobs a scenario counts.
    const lg = new Leadgate(services, url, {
      THUMBTACK_API_BASE_URL: thumbtack.url,
      RECONCILE_INTERVAL_SECONDS: String(7 * 86_400),
      ...env,
    });
    const api = await lg.startApi();
    const admin = (path: string, body: unknown, key = OPERATOR_KEY) =>
      fetch(`${api.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then((response) => response.json() as Promise<Record<string, any>>); // eslint-disable-line @typescript-eslint/no-explicit-any
    const tenant = await admin("/admin/tenants", { name: "Faults Agency" });
    const created = await admin(
      "/admin/connections",
      {
        provider: "thumbtack",
        externalAccountId: `70000000${randomBytes(4).readUInt32BE().toString().padStart(10, "0")}`, // a businessID: digits
        displayName: "Thumbtack",
        inboundAuth: { type: "basic" },
        credentials: { accessToken: "tt-token" },
        settings: { autoResponse: { enabled: true, text: REPLY }, crmDestination: { url: `${crm.url}/crm` } },
      },
      tenant.apiKey.key as string,
    );
    const { username, password } = created.secrets as { username: string; password: string };
    const template = fixture("thumbtack/negotiation-created-v4.json").json as { data: object };
    const run = randomBytes(3).toString("hex");
    const deliveries = Array.from({ length: events }, (_, n) => {
      const eventId = `neg-${run}-${n}`;
      return {
        eventId,
        path: `/webhooks/thumbtack/${created.connection.id as string}`,
        body: JSON.stringify({ ...template, data: { ...template.data, negotiationID: eventId } }),
        headers: { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}` },
      };
    });
    current = { lg, sql, deliveries, outcomes: new Map(), api };
    return current;
  }

  /** Waits until every event's three jobs succeeded (or the timeout), then counts. */
  async function settle(s: Scenario, timeoutMs = 120_000) {
    await waitFor(
      async () =>
        (
          await s.sql.query<{ done: number; all: number }>(
            "SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS done, count(*)::int AS all FROM jobs",
          )
        ).rows[0]!,
      (jobs) => jobs.all === s.deliveries.length * 3 && jobs.done === jobs.all,
      timeoutMs,
    ).catch(() => explainUnsettled(s)); // counted below as lost
    return count(s.sql, s.deliveries, s.outcomes, thumbtack, crm);
  }

  /** What CI needs to see when jobs never finished: job statuses and each process's state and last output. */
  async function explainUnsettled(s: Scenario) {
    const jobs = await s.sql.query<{ operation: string; status: string; n: number }>(
      "SELECT operation, status, count(*)::int AS n FROM jobs GROUP BY 1, 2 ORDER BY 1, 2",
    );
    const lines = [`jobs: ${jobs.rows.map((row) => `${row.operation}/${row.status}x${row.n}`).join(" ")}`];
    for (const [role, list] of [
      ["api", s.lg.apis],
      ["worker", s.lg.workers],
    ] as const) {
      for (const { spawned } of list) {
        const { exitCode, signalCode } = spawned.child;
        lines.push(`--- ${role} (exit ${exitCode ?? "-"}, signal ${signalCode ?? "-"}), last output:`);
        lines.push(spawned.output().slice(-6_000));
      }
    }
    process.stdout.write(`[faults] jobs did not settle\n${lines.join("\n")}\n`);
  }

  /** The running scenario, stopped after each test even when it failed (no orphan processes). */
  let current: Scenario | undefined;
  afterEach(async () => {
    const s = current;
    current = undefined;
    if (!s) return;
    await s.lg.stopAll();
    await s.sql.end();
  });

  /**
   * Sends the scenario's load with an outage in the middle: `stop` after the 200th answer, `start`
   * after the 400th; attempts sent in between are labelled `outage`. Then the senders' retries.
   */
  async function sendThroughOutage(
    s: Scenario,
    outage: string,
    stop: () => unknown,
    start: () => unknown,
  ): Promise<void> {
    let phase = "before";
    await sendAll(
      s.deliveries,
      () => [s.api.url],
      16,
      s.outcomes,
      async (sent) => {
        if (sent === 200) {
          await stop();
          phase = outage;
        }
        if (sent === 400) {
          phase = "restarting";
          await start();
          phase = "after";
        }
      },
      () => phase,
    );
    await retryUntilAccepted(s.deliveries, () => [s.api.url], s.outcomes);
  }

  const statusesIn = (s: Scenario, phase: string) =>
    [...s.outcomes.values()].flatMap((o) => o.attempts.filter((a) => a.phase === phase).map((a) => a.status));
  const tally = (statuses: number[]) =>
    Object.entries(
      statuses.reduce<Record<number, number>>(
        (all, status) => ({ ...all, [status]: (all[status] ?? 0) + 1 }),
        {},
      ),
    )
      .map(([status, n]) => `${status}x${n}`)
      .join(",");

  it("SIGKILL the API in the middle of a load: every delivery that got a 2xx has its receipt and jobs", async () => {
    const s = await scenario(600);
    await s.lg.startWorker();
    const port = Number(new URL(s.api.url).port);
    let current = s.api;
    await sendAll(
      s.deliveries,
      () => [current.url],
      16,
      s.outcomes,
      async (sent) => {
        if (sent !== 200) return;
        await Leadgate.kill(current);
        current = await s.lg.startApi(port);
      },
    );
    await retryUntilAccepted(s.deliveries, () => [current.url], s.outcomes);
    const counts = await settle(s);
    report("kill -9 api", counts, {
      firstAttempts: tally(s.deliveries.map((d) => s.outcomes.get(d.eventId)!.attempts[0]!.status)),
    });
    expect(counts).toMatchObject({ lost: 0, duplicated: 0, acknowledged: 600, stored: 600 });
  }, 300_000);

  it("stop Postgres in the middle of a load, then start it: only 503s while it is down, retries land once", async () => {
    const s = await scenario(600);
    await s.lg.startWorker();
    await sendThroughOutage(
      s,
      "postgres down",
      () => services.postgres.stop("immediate"),
      () => services.postgres.start(),
    );
    const counts = await settle(s, 200_000);
    const whileDown = statusesIn(s, "postgres down");
    const attempts = [...s.outcomes.values()].flatMap((o) => o.attempts);
    report("postgres stopped", counts, {
      whileDown: tally(whileDown),
      allAnswers: tally(attempts.map((a) => a.status)),
    });
    expect(whileDown.length).toBeGreaterThan(0);
    expect(whileDown.filter((status) => status !== 503)).toEqual([]);
    // Requests in flight at the crash included: a 2xx (stored: counted in `lost` otherwise) or a 503, nothing else.
    expect(attempts.filter((a) => ![200, 202, 503].includes(a.status))).toEqual([]);
    expect(attempts.filter((a) => a.status === 503 && !a.retryAfter)).toEqual([]);
    expect(counts).toMatchObject({ lost: 0, duplicated: 0, acknowledged: 600, stored: 600 });
  }, 300_000);

  it("stop Redis in the middle of a load, then start it: ingest keeps answering 202, every job completes once", async () => {
    const s = await scenario(600);
    await s.lg.startWorker();
    await sendThroughOutage(
      s,
      "redis down",
      () => services.redis.kill(),
      () => services.redis.start(), // empty: every BullMQ job it held is gone
    );
    const counts = await settle(s);
    const whileDown = statusesIn(s, "redis down");
    report("redis stopped", counts, { whileDown: tally(whileDown) });
    expect(whileDown.length).toBeGreaterThan(0);
    expect(whileDown.filter((status) => !isSuccess(status))).toEqual([]);
    expect(counts).toMatchObject({ lost: 0, duplicated: 0, acknowledged: 600, stored: 600 });
  }, 300_000);

  it("SIGKILL a worker while it runs jobs: every job completes, no side effect happens twice", async () => {
    const s = await scenario(300);
    replyDelayMs = 300;
    const worker = await s.lg.startWorker();
    await sendAll(s.deliveries, () => [s.api.url], 16, s.outcomes);
    await waitFor(
      () => Promise.resolve(thumbtack.received.filter((r) => r.method === "POST").length),
      (replies) => replies >= 60,
      60_000,
    );
    await Leadgate.kill(worker);
    const running = (
      await s.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM jobs WHERE status = 'running'")
    ).rows[0]!.n;
    await s.lg.startWorker();
    const counts = await settle(s, 180_000);
    replyDelayMs = 0;
    report("kill -9 worker", counts, { runningWhenKilled: running });
    expect(running).toBeGreaterThan(0);
    expect(counts).toMatchObject({ lost: 0, duplicated: 0, acknowledged: 300, stored: 300 });
  }, 300_000);

  it("SIGKILL a worker mid-send of an alert notification: it still arrives, at most twice, with one webhook-id", async () => {
    const s = await scenario(5);
    const refusing = await startFakeServer({ status: 400, body: { error: "bad lead" } });
    // The receiver takes 5 s to answer the first notification: the worker is killed while it waits.
    const receiver = await startFakeServer({ status: 204 });
    receiver.reply({ status: 204, delayMs: 5_000 });
    try {
      const [connection] = (
        await s.sql.query<{ id: string; tenant_id: string }>("SELECT id, tenant_id FROM connections")
      ).rows;
      await s.sql.query(
        `UPDATE connections SET settings = jsonb_set(settings, '{crmDestination,url}', to_jsonb($2::text)) WHERE id = $1`,
        [connection!.id, `${refusing.url}/crm`],
      );
      const channel = await fetch(`${s.api.url}/admin/notification-channels`, {
        method: "POST",
        headers: { authorization: `Bearer ${OPERATOR_KEY}`, "content-type": "application/json" },
        body: JSON.stringify({
          type: "webhook",
          url: `${receiver.url}/alerts`,
          tenantId: connection!.tenant_id,
        }),
      });
      expect(channel.status).toBe(201);
      const worker = await s.lg.startWorker();
      await sendAll(s.deliveries, () => [s.api.url], 4, s.outcomes);
      await waitFor(
        () => Promise.resolve(receiver.received.length),
        (n) => n >= 1,
        60_000,
      );
      await Leadgate.kill(worker); // mid-send: the receiver has the request, the worker never hears back
      const notification = async () =>
        (
          await s.sql.query<{ job_key: string; status: string }>(
            "SELECT job_key, status FROM jobs WHERE operation = 'notification'",
          )
        ).rows;
      const [whenKilled] = await notification();
      await s.lg.startWorker();
      const [done] = await waitFor(notification, ([job]) => job?.status === "succeeded", 180_000);
      // CRM jobs that were running when the worker died die only once the new worker takes them
      // back: the alert counts all five once every one of them is dead, not necessarily before.
      await waitFor(
        async () =>
          (
            await s.sql.query<{ n: number }>(
              "SELECT count(*)::int AS n FROM jobs WHERE operation = 'crm-delivery' AND status = 'dead'",
            )
          ).rows[0]!.n,
        (dead) => dead === 5,
        180_000,
      );
      const ids = receiver.received.map((request) => request.headers["webhook-id"]);
      const alerts = (await s.sql.query<{ type: string; count: number }>("SELECT type, count FROM alerts"))
        .rows;
      process.stdout.write(
        `[faults] kill -9 worker mid-notification: statusWhenKilled=${whenKilled?.status} received=${ids.length} webhookIds=${new Set(ids).size} alerts=${JSON.stringify(alerts)}\n`,
      );
      expect(whenKilled?.status).toBe("running");
      expect(alerts).toEqual([{ type: "job.dead", count: 5 }]);
      expect(ids.length).toBeGreaterThanOrEqual(1);
      expect(ids.length).toBeLessThanOrEqual(2);
      expect(new Set(ids)).toEqual(new Set([done!.job_key]));
    } finally {
      await Promise.all([refusing.close(), receiver.close()]);
    }
  }, 300_000);

  it("two APIs and two workers under load with every delivery sent twice: nothing duplicated", async () => {
    const s = await scenario(500);
    const second = await s.lg.startApi();
    await Promise.all([s.lg.startWorker(), s.lg.startWorker()]);
    const twice = s.deliveries.flatMap((delivery) => [delivery, delivery]);
    await sendAll(twice, () => [s.api.url, second.url], 32, s.outcomes);
    await retryUntilAccepted(s.deliveries, () => [s.api.url, second.url], s.outcomes);
    const counts = await settle(s);
    // Each event: exactly one 202 (stored now) and one 200 (duplicate), whichever API got which.
    const answers = [...s.outcomes.values()].map((o) =>
      o.attempts
        .map((a) => a.status)
        .sort()
        .join("+"),
    );
    const oneEach = answers.filter((a) => a === "200+202").length;
    report("2 apis + 2 workers, every delivery twice", counts, {
      requests: twice.length,
      oneNewOneDuplicate: oneEach,
    });
    expect(counts).toMatchObject({ lost: 0, duplicated: 0, redelivered: 0, acknowledged: 500, stored: 500 });
    expect(oneEach).toBe(500);
  }, 300_000);
  it("2,000 hostile requests: only 4xx, nothing written, the process still healthy", async () => {
    const s = await scenario(1);
    const [valid] = s.deliveries;
    const path = valid!.path;
    const auth = valid!.headers.authorization!;
    const random = (n: number) => randomBytes(n);
    const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
    const kinds: {
      name: string;
      request: () => { path: string; headers: Record<string, string>; body?: Buffer | string };
    }[] = [
      {
        name: "random bytes",
        request: () => ({
          path,
          headers: { authorization: auth, "content-type": "application/json" },
          body: random(1 + Math.floor(Math.random() * 2000)),
        }),
      },
      {
        name: "truncated json",
        request: () => ({
          path,
          headers: { authorization: auth, "content-type": "application/json" },
          body: valid!.body.slice(0, 1 + Math.floor(Math.random() * (valid!.body.length - 2))),
        }),
      },
      {
        name: "deeply nested json",
        request: () => ({
          path,
          headers: { authorization: auth, "content-type": "application/json" },
          body: nested(5_000 + Math.floor(Math.random() * 50_000)),
        }),
      },
      {
        name: "wrong types",
        request: () => ({
          path,
          headers: { authorization: auth, "content-type": "application/json" },
          body: JSON.stringify(
            pick([
              { event: 5, data: "x" },
              { event: { eventType: ["NegotiationCreatedV4"] }, data: { negotiationID: { id: 1 } } },
              [1, 2, 3],
              "text",
              null,
              42,
              { data: null },
            ]),
          ),
        }),
      },
      {
        name: "huge headers",
        request: () => ({
          path,
          headers: {
            authorization: auth,
            "content-type": "application/json",
            "x-padding": "a".repeat(20_000 + Math.floor(Math.random() * 40_000)),
          },
          body: valid!.body,
        }),
      },
      {
        name: "wrong auth",
        request: () => ({
          path,
          headers: {
            authorization: `Basic ${random(24).toString("base64")}`,
            "content-type": "application/json",
          },
          body: valid!.body,
        }),
      },
      {
        name: "missing auth",
        request: () => ({ path, headers: { "content-type": "application/json" }, body: valid!.body }),
      },
      {
        name: "wrong content type",
        request: () => ({
          path,
          headers: {
            authorization: auth,
            "content-type": pick([
              "text/plain",
              "application/xml",
              "multipart/form-data; boundary=x",
              "application/x-www-form-urlencoded",
              "image/png",
            ]),
          },
          body: valid!.body,
        }),
      },
      {
        name: "unknown connection",
        request: () => ({
          path: `/webhooks/thumbtack/${pick(["00000000-0000-4000-8000-000000000000", "not-a-uuid", "%00", "..%2f..%2fetc"])}`,
          headers: { authorization: auth, "content-type": "application/json" },
          body: valid!.body,
        }),
      },
      {
        name: "too large",
        request: () => ({
          path,
          headers: { authorization: auth, "content-type": "application/json" },
          body: JSON.stringify({ pad: "x".repeat(300_000) }),
        }),
      },
      {
        name: "bad yelp token",
        request: () => ({
          path: `/webhooks/yelp/${random(12).toString("hex")}`,
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ data: { id: "x", updates: [] } }),
        }),
      },
      {
        name: "NUL and lone surrogates",
        request: () => ({
          path,
          headers: { authorization: auth, "content-type": "application/json" },
          body: pick(['{"event":"\\u0000"}', '{"data":"\\ud800"}']),
        }),
      },
    ];
    function pick<T>(items: T[]): T {
      return items[Math.floor(Math.random() * items.length)]!;
    }
    const statuses = new Map<string, number[]>();
    const failures: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < 2000) {
          const kind = kinds[next++ % kinds.length]!;
          const { path: target, headers, body } = kind.request();
          let status: number;
          try {
            const response = await fetch(`${s.api.url}${target}`, {
              method: "POST",
              headers,
              body,
              signal: AbortSignal.timeout(10_000),
            });
            await response.arrayBuffer();
            status = response.status;
          } catch (error) {
            status = 0;
            const cause = (error as { cause?: { code?: string; message?: string } }).cause;
            failures.push(`${kind.name}: ${cause?.code ?? ""} ${cause?.message ?? String(error)}`);
          }
          statuses.set(kind.name, [...(statuses.get(kind.name) ?? []), status]);
        }
      }),
    );
    const all = [...statuses.values()].flat();
    const rows = (
      await s.sql.query<{ n: number }>(
        "SELECT (SELECT count(*) FROM receipts) + (SELECT count(*) FROM jobs) + (SELECT count(*) FROM payload_conflicts) + (SELECT count(*) FROM leads) AS n",
      )
    ).rows[0]!;
    const health = await fetch(`${s.api.url}/health/ready`);
    const accepted = await fetch(`${s.api.url}${path}`, {
      method: "POST",
      headers: { ...valid!.headers, "content-type": "application/json" },
      body: valid!.body,
    });
    process.stdout.write(
      `[faults] hostile requests: sent=${all.length} rejected4xx=${all.filter((x) => x >= 400 && x < 500).length} other=${all.filter((x) => x < 400 || x >= 500).length} rowsWritten=${Number(rows.n)} healthAfter=${health.status} validAfter=${accepted.status} byKind=${[...statuses].map(([name, list]) => `${name.replaceAll(" ", "-")}:${tally(list)}`).join(";")}${failures.length > 0 ? ` failures=${failures.join(" | ")}` : ""}\n`,
    );
    expect(all).toHaveLength(2000);
    expect(all.filter((x) => x < 400 || x >= 500)).toEqual([]);
    expect(Number(rows.n)).toBe(0);
    expect([health.status, accepted.status]).toEqual([200, 202]);
  }, 300_000);
});
