// The per-connection ingest rate limit is counted in Redis, so it holds across API replicas:
// over the limit, `429 rate_limited` with Retry-After and nothing written.
import { randomBytes } from "node:crypto";
import type { RunningApi } from "../support/app.js";
import { storedFor } from "../support/database.js";
import { useApp } from "../support/harness.js";
import { post } from "../support/http.js";
import { freePort } from "../support/process.js";
import { deadRedisEnv, keysMatching, testRedis } from "../support/redis.js";
import { createTenantWithConnection, type TestConnection } from "../support/tenants.js";
import { waitFor } from "../support/wait.js";

describe("ingest rate limit", () => {
  const app = useApp({ env: { WEBHOOK_RATE_LIMIT: "5", WEBHOOK_RATE_LIMIT_WINDOW_SECONDS: "3600" } });
  let replicas: RunningApi[];
  let prefix: string;

  /**
   * Waits until the replica's Redis client is connected (GET /health/ready): an API answers as soon
   * as it listens, and until then lets deliveries through unchecked, by design (a rate limiter's
   * outage must not lose leads). These tests are about the limit while Redis answers.
   */
  const ready = async (api: RunningApi) => {
    expect((await fetch(`${api.url}/health/ready`)).status).toBe(200);
    return api;
  };

  beforeAll(async () => {
    replicas = [await ready(app.api), await ready(await app.startApi())];
    prefix = app.config.redisPrefix;
  });

  const connect = () =>
    app.createConnection({
      provider: "staticforms",
      inboundAuth: { type: "bearer" },
    });
  const deliver = (api: RunningApi, c: TestConnection) =>
    post(
      `${api.url}/webhooks/staticforms/${c.connectionId}`,
      {
        event: "form.submitted",
        data: { submissionId: randomBytes(6).toString("hex"), formData: { name: "Ann" } },
      },
      { authorization: `Bearer ${c.secrets.bearerToken}` },
    );

  it("two replicas share one limit: exactly the limit is accepted, the rest get 429 and write nothing", async () => {
    const c = await connect();
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => deliver(replicas[i % 2]!, c)));
    const accepted = answers.filter((answer) => answer.status === 202);
    const limited = answers.filter((answer) => answer.status === 429);
    // Every delivery was checked against Redis (none let through unchecked), and exactly the limit passed.
    for (const replica of replicas) {
      const metrics = await (await fetch(`${replica.url}/metrics`)).text();
      expect(/^leadgate_rate_limit_unchecked_total (\d+)/m.exec(metrics)?.[1] ?? "0").toBe("0");
    }
    expect([accepted.length, limited.length]).toEqual([5, 7]);
    for (const answer of limited) {
      expect(answer.body.error).toBe("rate_limited");
      const retryAfter = Number(answer.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(3600);
    }
    expect(await storedFor(app.sql, c.tenantId)).toMatchObject({ receipts: 5 });
    // One counter for the window, created with its expiry (two windows), so Redis forgets it.
    const redis = testRedis(app.config);
    try {
      const keys = await keysMatching(redis, `${prefix}:rate:${c.connectionId}:*`);
      expect(keys).toHaveLength(1);
      expect(await redis.get(keys[0]!)).toBe("12");
      const ttl = await redis.pttl(keys[0]!);
      expect(ttl).toBeGreaterThan(7_100_000);
      expect(ttl).toBeLessThanOrEqual(7_200_000);
    } finally {
      redis.disconnect();
    }

    // Another connection has its own budget.
    const other = await connect();
    expect((await deliver(replicas[1]!, other)).status).toBe(202);
  });

  it("a larger limit is reserved in leases: never more than the limit accepted, Redis asked once per lease", async () => {
    const env = { WEBHOOK_RATE_LIMIT: "100" };
    const pair = [await ready(await app.startApi(env)), await ready(await app.startApi(env))];
    const redis = testRedis(app.config);
    try {
      // Sequential deliveries on one replica: leases of 5 (a twentieth of 100), so 6 deliveries reserve 10.
      const quiet = await connect();
      for (let i = 0; i < 6; i++) expect((await deliver(pair[0]!, quiet)).status).toBe(202);
      const [key] = await keysMatching(redis, `${prefix}:rate:${quiet.connectionId}:*`);
      expect(await redis.get(key!)).toBe("10");

      // A burst over both replicas: at most the limit, at least the limit minus one unused lease remainder.
      const busy = await connect();
      const answers = await Promise.all(Array.from({ length: 130 }, (_, i) => deliver(pair[i % 2]!, busy)));
      const accepted = answers.filter((answer) => answer.status === 202).length;
      expect(accepted).toBeLessThanOrEqual(100);
      expect(accepted).toBeGreaterThanOrEqual(96);
      expect(answers.filter((answer) => answer.status === 429).length).toBe(130 - accepted);
      expect(await storedFor(app.sql, busy.tenantId)).toMatchObject({ receipts: accepted });
    } finally {
      redis.disconnect();
      await Promise.all(pair.map((api) => api.close()));
    }
  });

  it("a lease of 10 or more is renewed once half is used, and a burst still passes no more than the limit", async () => {
    const env = { WEBHOOK_RATE_LIMIT: "400" };
    const pair = [await ready(await app.startApi(env)), await ready(await app.startApi(env))];
    const redis = testRedis(app.config);
    try {
      // Leases of 20: the 10th delivery leaves 10 and reserves the next 20 before anything waits for them.
      const quiet = await connect();
      for (let i = 0; i < 9; i++) expect((await deliver(pair[0]!, quiet)).status).toBe(202);
      const [key] = await keysMatching(redis, `${prefix}:rate:${quiet.connectionId}:*`);
      expect(await redis.get(key!)).toBe("20");
      expect((await deliver(pair[0]!, quiet)).status).toBe(202);
      await waitFor(
        () => redis.get(key!),
        (count) => count === "40",
      );

      // A burst over both replicas: each may hold a lease and a half unused, never more than the limit passes.
      const busy = await connect();
      const answers = await Promise.all(Array.from({ length: 450 }, (_, i) => deliver(pair[i % 2]!, busy)));
      const accepted = answers.filter((answer) => answer.status === 202).length;
      expect(accepted).toBeLessThanOrEqual(400);
      expect(accepted).toBeGreaterThanOrEqual(400 - 2 * 30);
      expect(answers.filter((answer) => answer.status === 429).length).toBe(450 - accepted);
      expect(await storedFor(app.sql, busy.tenantId)).toMatchObject({ receipts: accepted });
    } finally {
      redis.disconnect();
      await Promise.all(pair.map((api) => api.close()));
    }
  });

  it("without Redis the limit is not checked: deliveries are accepted, and the metric says so", async () => {
    const blind = await app.startApi({
      WEBHOOK_RATE_LIMIT: "1",
      ...deadRedisEnv(await freePort()),
    });
    try {
      const c = await createTenantWithConnection(blind.app, {
        provider: "staticforms",
        inboundAuth: { type: "bearer" },
      });
      const answers = await Promise.all([deliver(blind, c), deliver(blind, c), deliver(blind, c)]);
      expect(answers.map((answer) => answer.status)).toEqual([202, 202, 202]);
      expect(await storedFor(app.sql, c.tenantId)).toMatchObject({ receipts: 3, jobs: 3 });
      const metrics = await (await fetch(`${blind.url}/metrics`)).text();
      expect(Number(/^leadgate_rate_limit_unchecked_total (\d+)/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(
        3,
      );
    } finally {
      await blind.close();
    }
  });
});
