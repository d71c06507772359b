// Which Redis Leadgate talks to (api.md "Running"): one server at REDIS_URL, or the master a set of
// Sentinels names (REDIS_SENTINELS + REDIS_SENTINEL_NAME). REDIS_CLUSTER_NODES is parsed and
// checked against the topology rule, but refused: Cluster connections are not built yet, and a set
// variable must never be ignored silently.
import { isIP } from "node:net";
import { ConfigError, type Env, read } from "./env.js";

export interface RedisNode {
  host: string;
  port: number;
}

/**
 * `standalone`: REDIS_URL is the server. `sentinel`: the master `name` that `sentinels` elect; from
 * REDIS_URL only the password, TLS (`rediss:`) and database are used, its host is ignored.
 */
export type RedisTopology =
  { kind: "standalone" } | { kind: "sentinel"; sentinels: RedisNode[]; name: string };

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
  if (clusterNodes) {
    throw new ConfigError(
      "REDIS_CLUSTER_NODES",
      "is not supported yet: unset it and use REDIS_URL (one server) or REDIS_SENTINELS",
    );
  }
  if (!sentinels) {
    if (read(env, "REDIS_SENTINEL_NAME") !== undefined) {
      throw new ConfigError("REDIS_SENTINEL_NAME", "is set without REDIS_SENTINELS");
    }
    return { kind: "standalone" };
  }
  const database = new URL(read(env, "REDIS_URL") ?? "redis://127.0.0.1").pathname.replace(/^\//, "");
  if (!/^\d{0,5}$/.test(database)) {
    throw new ConfigError("REDIS_URL", `may name only a database number after its host (got "/${database}")`);
  }
  return { kind: "sentinel", sentinels, name: masterName(env) };
}
