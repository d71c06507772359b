// Which Redis Leadgate talks to (api.md "Running"): one server at REDIS_URL, the master a set of
// Sentinels names (REDIS_SENTINELS + REDIS_SENTINEL_NAME), or a Redis Cluster reached through any of
// REDIS_CLUSTER_NODES. At most one of Sentinel and Cluster (the topology rule).
import { isIP } from "node:net";
import { ConfigError, type Env, read } from "./env.js";

export interface RedisNode {
  host: string;
  port: number;
}

/**
 * `standalone`: REDIS_URL is the server. `sentinel`: the master `name` that `sentinels` elect.
 * `cluster`: the cluster that `nodes` (some or all of its masters and replicas) belong to. With
 * either of the last two, REDIS_URL gives only the password, TLS (`rediss:`) and database (a
 * cluster has database 0 only); its host is ignored.
 */
export type RedisTopology =
  | { kind: "standalone" }
  | { kind: "sentinel"; sentinels: RedisNode[]; name: string }
  | { kind: "cluster"; nodes: RedisNode[] };

const HOSTNAME =
  /^(?=.{1,253}$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** `host:port`, `[v6]:port`: a hostname or IP address and a port from 1 to 65535. */
function node(name: string, entry: string): RedisNode {
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(entry);
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  const validHost = host !== undefined && (match?.[1] ? isIP(host) === 6 : HOSTNAME.test(host));
  if (!validHost || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new ConfigError(name, `must be a comma-separated list of host:port (got "${entry}")`);
  }
  return { host, port };
}

function nodeList(env: Env, name: string): RedisNode[] | undefined {
  const value = read(env, name);
  if (value === undefined) return undefined;
  const entries = value.split(",").map((entry) => entry.trim());
  const nodes = entries.map((entry) => node(name, entry));
  const keys = nodes.map(({ host, port }) => `${host.toLowerCase()}:${port}`);
  const repeated = keys.find((key, index) => keys.indexOf(key) !== index);
  if (repeated !== undefined) throw new ConfigError(name, `lists ${repeated} twice`);
  return nodes;
}

/** A Sentinel master name as `sentinel monitor` takes it: letters, digits, `. _ -` (at most 64). */
function masterName(env: Env): string {
  const value = read(env, "REDIS_SENTINEL_NAME");
  if (value === undefined) {
    throw new ConfigError(
      "REDIS_SENTINEL_NAME",
      "is required with REDIS_SENTINELS (the master name the sentinels monitor)",
    );
  }
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(value)) {
    throw new ConfigError("REDIS_SENTINEL_NAME", "may hold only letters, digits, _ . - (at most 64)");
  }
  return value;
}

export function redisTopology(env: Env): RedisTopology {
  const sentinels = nodeList(env, "REDIS_SENTINELS");
  const clusterNodes = nodeList(env, "REDIS_CLUSTER_NODES");
  if (sentinels && clusterNodes) {
    throw new ConfigError(
      "REDIS_SENTINELS",
      "and REDIS_CLUSTER_NODES are both set: choose one Redis topology (Sentinel or Cluster)",
    );
  }
  if (!sentinels && read(env, "REDIS_SENTINEL_NAME") !== undefined) {
    throw new ConfigError("REDIS_SENTINEL_NAME", "is set without REDIS_SENTINELS");
  }
  if (!sentinels && !clusterNodes) return { kind: "standalone" };
  const database = new URL(read(env, "REDIS_URL") ?? "redis://127.0.0.1").pathname.replace(/^\//, "");
  if (!/^\d{0,5}$/.test(database)) {
    throw new ConfigError("REDIS_URL", `may name only a database number after its host (got "/${database}")`);
  }
  if (clusterNodes) {
    if (Number(database || 0) !== 0) {
      throw new ConfigError(
        "REDIS_URL",
        `names database ${database}, but a Redis Cluster has database 0 only`,
      );
    }
    return { kind: "cluster", nodes: clusterNodes };
  }
  return { kind: "sentinel", sentinels: sentinels!, name: masterName(env) };
}
