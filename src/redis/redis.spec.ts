import { loadConfig } from "../config/config.js";
import { section } from "../config/sections.js";
import { createRedis } from "./redis.js";

const BASE = { LEADGATE_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString("base64") };
const redisConfig = (env: Record<string, string>) => section(loadConfig({ ...BASE, ...env }), "redis");

describe("createRedis", () => {
  it("through Sentinel: the sentinels and master name; from REDIS_URL only password, TLS and db", () => {
    const client = createRedis(
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
    const client = createRedis(redisConfig({ REDIS_URL: "redis://10.1.2.3:6390/1" }), "fail-fast", {
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
});
