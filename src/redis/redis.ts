// The one home of every ioredis connection Leadgate opens (the API's fail-fast client, the worker's
// BullMQ connection; BullMQ duplicates the latter for its blocking commands, with these options).
// The topology (config/redis-topology.ts) decides where it goes: REDIS_URL's server, the master
// that REDIS_SENTINELS elect under REDIS_SENTINEL_NAME (followed through a failover), or the Redis
// Cluster that REDIS_CLUSTER_NODES belong to.
import { Cluster, type ClusterOptions, Redis, type RedisOptions } from "ioredis";
import type { RedisConfig } from "../config/sections.js";

/**
 * `fail-fast`: for request paths (ingest, health checks, rate limits, the API's enqueue): commands
 * fail at once while Redis is unreachable instead of queueing in memory, so nothing waits on an
 * outage or a failover. `patient`: BullMQ's connection in the worker process, which blocks on Redis
 * and retries every command until Redis answers again (BullMQ wants `maxRetriesPerRequest: null`).
 */
export type RedisConnectionKind = "fail-fast" | "patient";

/** A connection to one server or master (`Redis`), or to a whole cluster (`Cluster`, `isCluster`). */
export type RedisClient = Redis | Cluster;

/** A command refused by a node that is (now) a replica: reconnect, asking the sentinels for the master. */
const isReadOnly = (error: Error) => error.message.startsWith("READONLY");

const KINDS: Record<RedisConnectionKind, RedisOptions> = {
  "fail-fast": {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    // 1: reconnect, and the refused command fails (its caller has a fallback).
    reconnectOnError: (error) => (isReadOnly(error) ? 1 : false),
  },
  patient: {
    maxRetriesPerRequest: null,
    // 2: reconnect, then send the refused command again (to the new master).
    reconnectOnError: (error) => (isReadOnly(error) ? 2 : false),
  },
};

/**
 * Through Sentinel: REDIS_URL gives only the password, TLS (`rediss:`, to the master and to the
 * sentinels) and the database; the sentinels name the master's address. `failoverDetector`
 * subscribes to the sentinels' `+switch-master`, so a client also leaves a master that is still up
 * but demoted; after a connection loss the client asks the sentinels again, and a node that answers
 * as a replica is refused by ioredis's role check and retried.
 */
function sentinelOptions(config: RedisConfig): RedisOptions {
  const topology = config.redisTopology;
  if (topology.kind !== "sentinel") return {};
  const url = new URL(config.redisUrl);
  const tls = url.protocol === "rediss:" ? {} : undefined;
  return {
    sentinels: topology.sentinels,
    name: topology.name,
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    db: Number(url.pathname.slice(1) || 0),
    tls,
    enableTLSForSentinelMode: tls !== undefined,
    sentinelTLS: tls,
    failoverDetector: true,
    sentinelRetryStrategy: (attempt) => Math.min(attempt * 100, 1_000),
  };
}

const reconnectDelay = (attempt: number) => Math.min(attempt * 200, 2_000);

/**
 * The same two kinds on a cluster. Cluster-wide: offline queue and reconnection (ioredis reconnects
 * the nodes itself, and follows MOVED/ASK and a replica's promotion by refreshing the slot map).
 * Per node (`redisOptions`): credentials, TLS and the retries of a command. The fail-fast client
 * pipelines automatically: commands of one tick go to each master in one write, which is what lets
 * the ingest limiter's many single-key reservations cost one round trip per master.
 */
const CLUSTER_KINDS: Record<RedisConnectionKind, { cluster: ClusterOptions; node: RedisOptions }> = {
  "fail-fast": {
    cluster: {
      enableOfflineQueue: false,
      enableAutoPipelining: true,
      clusterRetryStrategy: reconnectDelay,
      slotsRefreshTimeout: 2_000,
    },
    node: { maxRetriesPerRequest: 1, connectTimeout: 2_000 },
  },
  // BullMQ: `maxRetriesPerRequest: null` on the nodes its blocking commands go to.
  patient: { cluster: { clusterRetryStrategy: reconnectDelay }, node: { maxRetriesPerRequest: null } },
};

/** REDIS_URL's credentials and TLS, for every node of a cluster; its host is ignored. */
function clusterOptions(
  config: RedisConfig,
  kind: RedisConnectionKind,
  lazyConnect: boolean,
): ClusterOptions {
  const url = new URL(config.redisUrl);
  const { cluster, node } = CLUSTER_KINDS[kind];
  return {
    ...cluster,
    enableReadyCheck: true,
    lazyConnect,
    redisOptions: {
      ...node,
      username: url.username ? decodeURIComponent(url.username) : undefined,
      password: url.password ? decodeURIComponent(url.password) : undefined,
      tls: url.protocol === "rediss:" ? {} : undefined,
    },
  };
}

/** A new connection of `kind` to the configured Redis (one server, the Sentinel-elected master, a cluster). */
export function createRedis(
  config: RedisConfig,
  kind: RedisConnectionKind,
  options: Pick<RedisOptions, "lazyConnect"> = {},
): RedisClient {
  const topology = config.redisTopology;
  if (topology.kind === "cluster") {
    return new Cluster(topology.nodes, clusterOptions(config, kind, options.lazyConnect ?? false));
  }
  const settings = { ...KINDS[kind], ...options };
  if (topology.kind === "sentinel") return new Redis({ ...sentinelOptions(config), ...settings });
  return new Redis(config.redisUrl, settings);
}
