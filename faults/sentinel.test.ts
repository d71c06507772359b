// The Redis Sentinel fault scenario of `npm run test:faults` (api.md "Running": REDIS_SENTINELS):
// Leadgate's API and worker reach Redis only through three sentinels (REDIS_URL names no reachable
// host), a steady load of Thumbtack deliveries runs, and the master is killed with SIGKILL. The
// sentinels promote the replica; Leadgate must follow without losing or repeating work.
import { randomBytes } from "node:crypto";
import type pg from "pg";
import type { FakeServer } from "../test/support/fake-server.js";
import { startFakeServer } from "../test/support/fake-server.js";
import { Leadgate, Services } from "./support/cluster.js";
import { isSuccess, type Outcome, retryUntilAccepted, sendAll } from "./support/load.js";
import { MASTER_NAME, SentinelRedis } from "./support/sentinel.js";
import { fakeThumbtack, thumbtackDeliveries } from "./support/thumbtack-load.js";
import { count, report } from "./support/verify.js";
import { waitFor } from "../test/support/wait.js";

const EVENTS = 500;
/** The master is killed after this many answers (a few seconds into the load). */
const KILL_AFTER = 120;

describe("fault injection: Redis Sentinel", () => {
  let services: Services;
  let redis: SentinelRedis;
  let thumbtack: FakeServer;
  let crm: FakeServer;
  let lg: Leadgate | undefined;
  let sql: pg.Pool | undefined;

  beforeAll(async () => {
    services = await Services.start();
    redis = await SentinelRedis.start();
    thumbtack = await fakeThumbtack();
    crm = await startFakeServer({ status: 200, body: {} });
  }, 120_000);
  afterAll(async () => {
    await lg?.stopAll();
    await sql?.end();
    await Promise.all([thumbtack?.close(), crm?.close()]);
    await redis?.stop();
    await services?.stop();
  });

  it("kill -9 the Redis master under a steady load: the replica is promoted, Leadgate follows, nothing lost or repeated", async () => {
    const database = await services.database();
    sql = database.sql;
    const prefix = `faults-sentinel-${randomBytes(3).toString("hex")}`;
    lg = new Leadgate(services, database.url, {
      // Through the sentinels only: REDIS_URL's host is ignored (nothing listens there).
      REDIS_URL: "redis://redis-url-host-is-ignored.invalid:1/0",
      REDIS_SENTINELS: redis.addresses,
      REDIS_SENTINEL_NAME: MASTER_NAME,
      REDIS_PREFIX: prefix,
      THUMBTACK_API_BASE_URL: thumbtack.url,
      RECONCILE_INTERVAL_SECONDS: String(7 * 86_400),
    });
    const api = await lg.startApi();
    await lg.startWorker();
    const deliveries = await thumbtackDeliveries(api.url, crm.url, EVENTS);
    const outcomes = new Map<string, Outcome>();

    // Phases: "before" the kill, "no master" until the sentinels name the replica, then "after".
    let phase = "before";
    let killedAt = 0;
    let promotedAt = 0;
    const watchPromotion = async () => {
      for (;;) {
        const ports = await redis.masterPorts();
        if (ports.filter((port) => port === redis.replica.port).length >= 2) break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      promotedAt = Date.now();
      phase = "after";
    };
    let promotion: Promise<void> | undefined;
    await sendAll(
      deliveries,
      () => [api.url],
      4,
      outcomes,
      async (sent) => {
        if (sent === KILL_AFTER) {
          await redis.killMaster();
          killedAt = Date.now();
          phase = "no master";
          promotion = watchPromotion();
        }
        await new Promise((resolve) => setTimeout(resolve, 80)); // a steady ~40 deliveries/s
      },
      () => phase,
    );
    await promotion;
    await retryUntilAccepted(deliveries, () => [api.url], outcomes);

    const jobs = () =>
      sql!.query<{ done: number; all: number }>(
        "SELECT count(*) FILTER (WHERE status = 'succeeded')::int AS done, count(*)::int AS all FROM jobs",
      );
    await waitFor(
      async () => (await jobs()).rows[0]!,
      (row) => row.all === EVENTS * 3 && row.done === row.all,
      60_000,
    ).catch(() => undefined); // counted below as lost
    const counts = await count(sql, deliveries, outcomes, thumbtack, crm);

    // The failover as Leadgate saw it: the first BullMQ write (an event-stream entry) on the new
    // master after the kill. Stream ids start with the server's clock in ms.
    const newMaster = redis.client(redis.replica.port);
    const streams = await newMaster.keys(`${prefix}:*:events`);
    const firstAfterKill = await Promise.all(
      streams.map(async (key) => {
        const [entry] = await newMaster.xrange(key, String(killedAt + 1), "+", "COUNT", 1);
        return entry ? Number(entry[0].split("-")[0]) : Infinity;
      }),
    );
    const role = await newMaster.role();
    newMaster.disconnect();
    const firstBullmqOp = Math.min(...firstAfterKill);

    const attempts = [...outcomes.values()].flatMap((outcome) => outcome.attempts);
    const inPhase = (name: string) => attempts.filter((attempt) => attempt.phase === name);
    const tally = (list: { status: number }[]) =>
      Object.entries(
        list.reduce<Record<number, number>>(
          (all, { status }) => ({ ...all, [status]: (all[status] ?? 0) + 1 }),
          {},
        ),
      )
        .map(([status, n]) => `${status}x${n}`)
        .join(",") || "none";
    report("redis sentinel failover (kill -9 master)", counts, {
      accepted2xx: attempts.filter((attempt) => isSuccess(attempt.status)).length,
      refused503: attempts.filter((attempt) => attempt.status === 503).length,
      promotedSeconds: ((promotedAt - killedAt) / 1000).toFixed(1),
      failoverSeconds: ((firstBullmqOp - killedAt) / 1000).toFixed(1),
      noMasterAnswers: tally(inPhase("no master")),
      afterAnswers: tally(inPhase("after")),
      retries: tally(inPhase("retries")),
    });

    expect(role[0]).toBe("master"); // the replica was promoted
    expect(firstBullmqOp - killedAt).toBeLessThan(15_000); // and Leadgate's queues work on it soon after
    expect((await fetch(`${api.url}/health/ready`)).status).toBe(200); // the API's own client too
    expect(inPhase("no master").length).toBeGreaterThan(0);
    // Never anything but a 2xx (stored) or a 503 with Retry-After, and a 503 only while no master exists.
    expect(attempts.filter((a) => !isSuccess(a.status) && a.status !== 503)).toEqual([]);
    expect(attempts.filter((a) => a.status === 503 && (a.phase !== "no master" || !a.retryAfter))).toEqual(
      [],
    );
    expect(counts).toMatchObject({ lost: 0, duplicated: 0, acknowledged: EVENTS, stored: EVENTS });
  }, 120_000);
});
