import { appConfig } from "../app-config.js";
import { ConfigError } from "./config.js";

const KEY = Buffer.alloc(32, 1).toString("base64");
const BASE = { DATABASE_URL: "postgresql://u@localhost:5432/db", LEADGATE_ENCRYPTION_KEY: KEY };

function errorOf(env: Record<string, string>): ConfigError {
  try {
    appConfig({ ...BASE, ...env });
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error("loadConfig accepted the environment");
}

describe("the Redis topology (REDIS_SENTINELS, REDIS_SENTINEL_NAME, REDIS_CLUSTER_NODES)", () => {
  it("is one server at REDIS_URL when neither Sentinel nor Cluster is set", () => {
    expect(appConfig(BASE).redisTopology).toEqual({ kind: "standalone" });
  });

  it("parses the sentinels and the master name; REDIS_URL stays for password, TLS and database", () => {
    const config = appConfig({
      ...BASE,
      REDIS_URL: "rediss://:s3cret@ignored.example:6380/2",
      REDIS_SENTINELS: " 127.0.0.1:26379, sentinel-2.internal:26380 ,[::1]:26381",
      REDIS_SENTINEL_NAME: "leadgate-master",
    });
    expect(config.redisTopology).toEqual({
      kind: "sentinel",
      name: "leadgate-master",
      sentinels: [
        { host: "127.0.0.1", port: 26379 },
        { host: "sentinel-2.internal", port: 26380 },
        { host: "::1", port: 26381 },
      ],
    });
    expect(config.redisUrl).toBe("rediss://:s3cret@ignored.example:6380/2");
  });

  it("requires REDIS_SENTINEL_NAME with REDIS_SENTINELS", () => {
    const error = errorOf({ REDIS_SENTINELS: "127.0.0.1:26379" });
    expect(error.variable).toBe("REDIS_SENTINEL_NAME");
    expect(error.message).toMatch(/^REDIS_SENTINEL_NAME is required with REDIS_SENTINELS/);
  });

  it("refuses REDIS_SENTINEL_NAME without REDIS_SENTINELS (it would be ignored)", () => {
    const error = errorOf({ REDIS_SENTINEL_NAME: "mymaster" });
    expect(error.message).toBe("REDIS_SENTINEL_NAME is set without REDIS_SENTINELS");
  });

  it.each([
    ["no port", "127.0.0.1"],
    ["port 0", "127.0.0.1:0"],
    ["port too large", "127.0.0.1:65536"],
    ["not a port", "127.0.0.1:abc"],
    ["an empty entry", "127.0.0.1:26379,"],
    ["a URL", "redis://127.0.0.1:26379"],
    ["an unbracketed IPv6 address", "::1:26379"],
    ["a bad hostname", "bad_host:26379"],
  ])("names a malformed REDIS_SENTINELS (%s) in one line", (_, value) => {
    const error = errorOf({ REDIS_SENTINELS: value, REDIS_SENTINEL_NAME: "mymaster" });
    expect(error.variable).toBe("REDIS_SENTINELS");
    expect(error.message).toMatch(/^REDIS_SENTINELS must be a comma-separated list of host:port \(got "/);
    expect(error.message.split("\n")).toHaveLength(1);
  });

  it("refuses a sentinel listed twice", () => {
    const error = errorOf({
      REDIS_SENTINELS: "Sentinel.local:26379,sentinel.local:26379",
      REDIS_SENTINEL_NAME: "mymaster",
    });
    expect(error.message).toBe("REDIS_SENTINELS lists sentinel.local:26379 twice");
  });

  it("refuses a malformed master name", () => {
    const error = errorOf({ REDIS_SENTINELS: "127.0.0.1:26379", REDIS_SENTINEL_NAME: "my master" });
    expect(error.variable).toBe("REDIS_SENTINEL_NAME");
  });

  it("refuses a REDIS_URL path that is not a database number with Sentinel", () => {
    const error = errorOf({
      REDIS_URL: "redis://127.0.0.1:6379/queues",
      REDIS_SENTINELS: "127.0.0.1:26379",
      REDIS_SENTINEL_NAME: "mymaster",
    });
    expect(error.message).toMatch(/^REDIS_URL may name only a database number/);
  });

  it("refuses both Sentinel and Cluster with one line (the topology rule)", () => {
    const error = errorOf({
      REDIS_SENTINELS: "127.0.0.1:26379",
      REDIS_SENTINEL_NAME: "mymaster",
      REDIS_CLUSTER_NODES: "127.0.0.1:7000,127.0.0.1:7001",
    });
    expect(error.message).toBe(
      "REDIS_SENTINELS and REDIS_CLUSTER_NODES are both set: choose one Redis topology (Sentinel or Cluster)",
    );
  });

  it("a cluster: its nodes; REDIS_URL keeps its password, TLS and database 0 only", () => {
    expect(errorOf({ REDIS_CLUSTER_NODES: "127.0.0.1:7000,nope" }).message).toBe(
      'REDIS_CLUSTER_NODES must be a comma-separated list of host:port (got "nope")',
    );
    const config = appConfig({
      ...BASE,
      REDIS_URL: "rediss://:secret@ignored.example:6379/0",
      REDIS_CLUSTER_NODES: "127.0.0.1:7000, [::1]:7001,redis-2.internal:7002",
    });
    expect(config.redisTopology).toEqual({
      kind: "cluster",
      nodes: [
        { host: "127.0.0.1", port: 7000 },
        { host: "::1", port: 7001 },
        { host: "redis-2.internal", port: 7002 },
      ],
    });
    const database = errorOf({ REDIS_URL: "redis://127.0.0.1/2", REDIS_CLUSTER_NODES: "127.0.0.1:7000" });
    expect(database.message).toBe("REDIS_URL names database 2, but a Redis Cluster has database 0 only");
    const named = errorOf({ REDIS_SENTINEL_NAME: "mymaster", REDIS_CLUSTER_NODES: "127.0.0.1:7000" });
    expect(named.message).toBe("REDIS_SENTINEL_NAME is set without REDIS_SENTINELS");
  });

  it("a cluster refuses a REDIS_PREFIX with braces: Leadgate adds one hash tag per queue", () => {
    const error = errorOf({ REDIS_PREFIX: "{leadgate}", REDIS_CLUSTER_NODES: "127.0.0.1:7000" });
    expect(error.variable).toBe("REDIS_PREFIX");
    expect(appConfig({ ...BASE, REDIS_PREFIX: "{leadgate}" }).redisPrefix).toBe("{leadgate}");
  });
});
