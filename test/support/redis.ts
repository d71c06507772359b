// The tests' Redis: the local server (127.0.0.1:6379), or under `npm run test:cluster` the cluster
// that globalSetup started (LEADGATE_TEST_REDIS_CLUSTER_NODES). Tests that look into Redis, or
// point an app at a Redis that is not there, go through these so they hold on either topology.
import { once } from "node:events";
import { Cluster, Redis } from "ioredis";
import type { AppConfig } from "../../src/config/config.js";

/** The cluster's nodes when the suite runs against one (`npm run test:cluster`). */
export const TEST_CLUSTER_NODES = process.env.LEADGATE_TEST_REDIS_CLUSTER_NODES;

/** What a test app's environment adds for the suite's Redis: the cluster, or nothing (REDIS_URL's default). */
export function testRedisEnv(): Record<string, string> {
  return TEST_CLUSTER_NODES ? { REDIS_CLUSTER_NODES: TEST_CLUSTER_NODES } : {};
}

/** An environment whose Redis does not answer (nothing listens on `port`), on the suite's topology. */
export function deadRedisEnv(port: number): Record<string, string> {
  return TEST_CLUSTER_NODES
    ? { REDIS_CLUSTER_NODES: `127.0.0.1:${port}` }
    : { REDIS_URL: `redis://127.0.0.1:${port}` };
}

/** A client of the test's own on the app's Redis (one server or the cluster); disconnect it after. */
export function testRedis(config: Pick<AppConfig, "redisUrl" | "redisTopology">): Redis | Cluster {
  const topology = config.redisTopology;
  if (topology.kind === "cluster")
    return new Cluster(topology.nodes, { redisOptions: { maxRetriesPerRequest: 1 } });
  return new Redis(config.redisUrl, { maxRetriesPerRequest: 1 });
}

/** KEYS `pattern` over the whole keyspace: on a cluster, of every master. */
export async function keysMatching(redis: Redis | Cluster, pattern: string): Promise<string[]> {
  if (!redis.isCluster) return redis.keys(pattern);
  if (redis.status !== "ready") await once(redis, "ready"); // its masters are known once it is
  const masters = (redis as Cluster).nodes("master");
  return (await Promise.all(masters.map((node) => node.keys(pattern)))).flat();
}
