// The Redis Cluster fault scenario of `npm run test:faults` (api.md "Running": REDIS_CLUSTER_NODES):
// Leadgate's API and worker on a cluster of three masters with a replica each, a steady load of
// Thumbtack deliveries, and the master holding the lead-upsert queue's slot (every event's first
// job) killed with SIGKILL. The cluster promotes that master's replica; every Leadgate process must
// follow the new slot map on its own, without losing or repeating work.
import type pg from "pg";
import { Redis } from "ioredis";
import type { FakeServer } from "../test/support/fake-server.js";
import { startFakeServer } from "../test/support/fake-server.js";
import { type RedisCluster, startRedisCluster } from "../test/support/redis-cluster.js";
import { type Leadgate, Services } from "./support/cluster.js";
import { expectFollowed, killMasterUnderLoad } from "./support/redis-failover.js";
import { fakeThumbtack } from "./support/thumbtack-load.js";

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
    const [first] = cluster.ports as [number];
    const survivorOf = (victim: number) => cluster.ports.find((port) => port !== victim)!;
    let victim = 0;
    let slot = 0;
    let promoted = 0;
    const tag = (prefix: string) => `{${prefix}.lead-upsert}`;
    const result = await killMasterUnderLoad(
      "redis cluster failover (kill -9 a master)",
      services,
      sql,
      database.url,
      (prefix) => ({
        env: { REDIS_CLUSTER_NODES: cluster.nodes },
        killMaster: async () => {
          const probe = node(first);
          slot = Number(await probe.call("CLUSTER", "KEYSLOT", tag(prefix)));
          probe.disconnect();
          victim = await masterOfSlot(first, slot);
          await cluster.kill(victim);
        },
        // A surviving master maps the slot to another node, and that node reports the cluster ok.
        promoted: async () => {
          const master = await masterOfSlot(survivorOf(victim), slot);
          if (master === victim) return false;
          const client = node(master);
          const info = String(await client.call("CLUSTER", "INFO").catch(() => ""));
          client.disconnect();
          promoted = master;
          return info.includes("cluster_state:ok");
        },
        // The first write to the lead-upsert queue's event stream on the promoted master after
        // the kill. Stream ids start with the server's clock in ms.
        firstQueueWrite: async (prefix, since) => {
          const client = node(promoted);
          try {
            const key = `${tag(prefix)}:lead-upsert:events`;
            const [entry] = await client.xrange(key, String(since + 1), "+", "COUNT", 1);
            return entry ? Number(entry[0].split("-")[0]) : Infinity;
          } finally {
            client.disconnect();
          }
        },
      }),
      { thumbtack, crm },
      (started) => (lg = started),
    );

    expect(promoted).not.toBe(victim); // the replica took the slot over
    await expectFollowed(result, 20_000);
  }, 150_000);
});
