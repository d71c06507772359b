import { loadConfig } from "../config/config.js";
import { section } from "../config/sections.js";
import type { Cluster, Redis } from "ioredis";
import { createRedis } from "./redis.js";

const BASE = { LEADGATE_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64") };
const redisConfig = (env: Record<string, string>) => section(loadConfig({ ...BASE, ...env }, []), "redis");

describe("createRedis", () => {
  it("through Sentinel: the sentinels and master name; from REDIS_URL only password, TLS and db", () => {
    const client = <Redis>createRedis(
      redisConfig({
        REDIS_URL: "rediss://app:p%40ss@ignored.example:6390/3",
        REDIS_SENTINELS: "127.0.0.1:26379,127.0.0.1:26380",
        REDIS_SENTINEL_NAME: "leadgate",
      }),
      "patient",
      { lazyConnect: true },
    );
    expect(client.options).toMatchObject({
      sentinels: [
        { host: "127.0.0.1", port: 26379 },
        { host: "127.0.0.1", port: 26380 },
      ],
      name: "leadgate",
      username: "app",
      password: "p@ss",
      db: 3,
      tls: {},
      enableTLSForSentinelMode: true,
      failoverDetector: true,
      maxRetriesPerRequest: null,
    });
    expect(client.options.host).not.toBe("ignored.example");
    client.disconnect();
  });

  it("one server: REDIS_URL as given; fail-fast commands never queue while it is unreachable", () => {
    const client = <Redis>createRedis(redisConfig({ REDIS_URL: "redis://10.1.2.3:6390/1" }), "fail-fast", {
      lazyConnect: true,
    });
    expect(client.options).toMatchObject({
      host: "10.1.2.3",
      port: 6390,
      db: 1,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
    });
    expect(client.options.sentinels).toBeFalsy();
    client.disconnect();
  });

  it("a cluster: its nodes; per node REDIS_URL's credentials and TLS; fail-fast never queues", () => {
    const env = {
      REDIS_URL: "rediss://app:p%40ss@ignored.example:6379",
      REDIS_CLUSTER_NODES: "10.0.0.1:7000,10.0.0.2:7001",
    };
    const client = <Cluster>createRedis(redisConfig(env), "fail-fast", { lazyConnect: true });
    expect(client.isCluster).toBe(true);
    expect(client["startupNodes"]).toEqual([
      { host: "10.0.0.1", port: 7000 },
      { host: "10.0.0.2", port: 7001 },
    ]);
    expect(client.options).toMatchObject({
      enableOfflineQueue: false,
      enableReadyCheck: true,
      enableAutoPipelining: true,
      redisOptions: { username: "app", password: "p@ss", tls: {}, maxRetriesPerRequest: 1 },
    });
    client.disconnect();
    const patient = <Cluster>createRedis(redisConfig(env), "patient", { lazyConnect: true });
    expect(patient.options.redisOptions).toMatchObject({ maxRetriesPerRequest: null });
    expect(patient.options.enableAutoPipelining).toBe(false);
    patient.disconnect();
  });
});
