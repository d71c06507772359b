// The Redis Sentinel fault scenario of `npm run test:faults` (api.md "Running": REDIS_SENTINELS):
// Leadgate's API and worker reach Redis only through three sentinels (REDIS_URL names no reachable
// host), a steady load of Thumbtack deliveries runs, and the master is killed with SIGKILL. The
// sentinels promote the replica; Leadgate must follow without losing or repeating work.
import type pg from "pg";
import type { FakeServer } from "../test/support/fake-server.js";
import { startFakeServer } from "../test/support/fake-server.js";
import { type Leadgate, Services } from "./support/cluster.js";
import { expectFollowed, killMasterUnderLoad } from "./support/redis-failover.js";
import { MASTER_NAME, SentinelRedis } from "./support/sentinel.js";
import { fakeThumbtack } from "./support/thumbtack-load.js";

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
    const result = await killMasterUnderLoad(
      "redis sentinel failover (kill -9 master)",
      services,
      sql,
      database.url,
      () => ({
        env: { REDIS_SENTINELS: redis.addresses, REDIS_SENTINEL_NAME: MASTER_NAME },
        killMaster: () => redis.killMaster(),
        // Two sentinels (the quorum) name the replica.
        promoted: async () =>
          (await redis.masterPorts()).filter((port) => port === redis.replica.port).length >= 2,
        // The first BullMQ write (an event-stream entry) on the new master after the kill. Stream
        // ids start with the server's clock in ms.
        firstQueueWrite: async (prefix, since) => {
          const node = redis.client(redis.replica.port);
          try {
            const streams = await node.keys(`${prefix}:*:events`);
            const firsts = await Promise.all(
              streams.map(async (key) => {
                const [entry] = await node.xrange(key, String(since + 1), "+", "COUNT", 1);
                return entry ? Number(entry[0].split("-")[0]) : Infinity;
              }),
            );
            return Math.min(...firsts);
          } finally {
            node.disconnect();
          }
        },
      }),
      { thumbtack, crm },
      (started) => (lg = started),
    );

    const newMaster = redis.client(redis.replica.port);
    const role = await newMaster.role();
    newMaster.disconnect();
    expect(role[0]).toBe("master"); // the replica was promoted
    await expectFollowed(result, 15_000);
  }, 120_000);
});
