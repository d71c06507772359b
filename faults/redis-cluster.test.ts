// The Redis Cluster fault scenario of `npm run test:faults` (api.md "Running": REDIS_CLUSTER_NODES):
// Leadgate's API and worker on a cluster of three masters with a replica each, a steady load of
// Thumbtack deliveries, and the master holding the lead-upsert queue's slot killed (every event's first job) with SIGKILL.
// The cluster promotes that master's replica; every Leadgate process must follow the new slot map
// on its own, without losing or repeating work.
import { randomBytes } from "node:crypto";
import type pg from "pg";
import { Redis } from "ioredis";
import type { FakeServer } from "../test/support/fake-server.js";
import { startFakeServer } from "../test/support/fake-server.js";
import { type RedisCluster, startRedisCluster } from "../test/support/redis-cluster.js";
import { waitFor } from "../test/support/wait.js";
import { Leadgate, Services } from "./support/cluster.js";
import { isSuccess, type Outcome, retryUntilAccepted, sendAll } from "./support/load.js";
import { fakeThumbtack, thumbtackDeliveries } from "./support/thumbtack-load.js";
import { count, report } from "./support/verify.js";

const EVENTS = 500;
/** The master is killed after this many answers (a few seconds into the load). */
const KILL_AFTER = 120;
/** cluster-node-timeout: how long a silent master takes to be failed over. */
const NODE_TIMEOUT_MS = 2000;

function node(port: number): Redis {
  const client = new Redis({ port, host: "127.0.0.1", maxRetriesPerRequest: 1, retryStrategy: () => null });
  client.on("error", () => undefined);
  return client;
}

/** The port of the master serving `slot`, as the node at `askPort` sees the cluster. */
async function masterOfSlot(askPort: number, slot: number): Promise<number> {
  const client = node(askPort);
  try {
    const ranges = (await client.call("CLUSTER", "SLOTS")) as [number, number, [string, number]][];
    const range = ranges.find(([from, to]) => slot >= from && slot <= to);
    if (!range) throw new Error(`no node serves slot ${slot}`);
    return range[2][1];
  } finally {
    client.disconnect();
  }
}

describe("fault injection: Redis Cluster", () => {
  let services: Services;
  let cluster: RedisCluster;
  let thumbtack: FakeServer;
  let crm: FakeServer;
  let lg: Leadgate | undefined;
  let sql: pg.Pool | undefined;

  beforeAll(async () => {
    services = await Services.start();
    cluster = await startRedisCluster(3, { replicas: 1, nodeTimeoutMs: NODE_TIMEOUT_MS });
    thumbtack = await fakeThumbtack();
    crm = await startFakeServer({ status: 200, body: {} });
  }, 120_000);
  afterAll(async () => {
    await lg?.stopAll();
    await sql?.end();
    await Promise.all([thumbtack?.close(), crm?.close()]);
    await cluster?.stop();
    await services?.stop();
  });

  it("kill -9 the master of the lead-upsert queue under a steady load: its replica takes over, Leadgate follows, nothing lost or repeated", async () => {
    const database = await services.database();
    sql = database.sql;
    const prefix = `faults-cluster-${randomBytes(3).toString("hex")}`;
    lg = new Leadgate(services, database.url, {
      REDIS_URL: "redis://redis-url-host-is-ignored.invalid:1/0",
      REDIS_CLUSTER_NODES: cluster.nodes,
      REDIS_PREFIX: prefix,
      THUMBTACK_API_BASE_URL: thumbtack.url,
      RECONCILE_INTERVAL_SECONDS: String(7 * 86_400),
    });
    const api = await lg.startApi();
    await lg.startWorker();
    const deliveries = await thumbtackDeliveries(api.url, crm.url, EVENTS);
    const outcomes = new Map<string, Outcome>();

    const tag = `{${prefix}.lead-upsert}`;
    const probe = node(cluster.ports[0]!);
    const slot = Number(await probe.call("CLUSTER", "KEYSLOT", tag));
    probe.disconnect();
    const victim = await masterOfSlot(cluster.ports[0]!, slot);
    const survivor = cluster.ports.find((port) => port !== victim)!;

    // Phases: "before" the kill, "failing over" until the cluster serves the slot from the
    // promoted replica, then "after".
    let phase = "before";
    let killedAt = 0;
    let promotedAt = 0;
    let promoted = 0;
    const watchPromotion = async () => {
      for (;;) {
        const master = await masterOfSlot(survivor, slot).catch(() => victim);
        if (master !== victim) {
          const client = node(master);
          const info = await client.call("CLUSTER", "INFO").catch(() => "");
          client.disconnect();
          if (String(info).includes("cluster_state:ok")) {
            promoted = master;
            break;
          }
        }
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
          await cluster.kill(victim);
          killedAt = Date.now();
          phase = "failing over";
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

    // The failover as Leadgate saw it: the first write to the lead-upsert queue's event stream on
    // the promoted master after the kill. Stream ids start with the server's clock in ms.
    const newMaster = node(promoted);
    const [entry] = await newMaster.xrange(
      `${tag}:lead-upsert:events`,
      String(killedAt + 1),
      "+",
      "COUNT",
      1,
    );
    newMaster.disconnect();
    const firstQueueOp = entry ? Number(entry[0].split("-")[0]) : Infinity;

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
    report("redis cluster failover (kill -9 a master)", counts, {
      accepted2xx: attempts.filter((attempt) => isSuccess(attempt.status)).length,
      refused503: attempts.filter((attempt) => attempt.status === 503).length,
      promotedSeconds: ((promotedAt - killedAt) / 1000).toFixed(1),
      failoverSeconds: ((firstQueueOp - killedAt) / 1000).toFixed(1),
      failingOverAnswers: tally(inPhase("failing over")),
      afterAnswers: tally(inPhase("after")),
      retries: tally(inPhase("retries")),
    });

    expect(promoted).not.toBe(victim); // the replica took the slot over
    expect(firstQueueOp - killedAt).toBeLessThan(20_000); // and Leadgate's queue works on it soon after
    expect((await fetch(`${api.url}/health/ready`)).status).toBe(200); // the API's own client too
    expect(inPhase("failing over").length).toBeGreaterThan(0);
    // Never anything but a 2xx (stored) or a 503 with Retry-After, and a 503 only during the failover.
    expect(attempts.filter((a) => !isSuccess(a.status) && a.status !== 503)).toEqual([]);
    expect(attempts.filter((a) => a.status === 503 && (a.phase !== "failing over" || !a.retryAfter))).toEqual(
      [],
    );
    expect(counts).toMatchObject({ lost: 0, duplicated: 0, acknowledged: EVENTS, stored: EVENTS });
  }, 150_000);
});
