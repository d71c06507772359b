import { QUEUE_NAMES, queuePrefix, unconsumed } from "./queue-names.js";

describe("queue vocabulary", () => {
  it("names no queue when every queue has a worker", () => {
    expect(unconsumed([...QUEUE_NAMES])).toEqual([]);
  });

  it("names the queues without a worker (the worker process then fails its boot)", () => {
    expect(
      unconsumed(["lead-upsert", "crm-delivery", "reconciliation", "notification", "retention"]),
    ).toEqual(["initial-response", "provider-sync", "provider-mark-replied", "replay-batch"]);
  });
});

describe("queuePrefix", () => {
  it("one server or Sentinel: REDIS_PREFIX as it always was", () => {
    expect(
      queuePrefix({ redisPrefix: "leadgate", redisTopology: { kind: "standalone" } }, "crm-delivery"),
    ).toBe("leadgate");
  });

  it("a cluster: one hash tag per queue, so the queues hash to different slots", () => {
    const cluster = { redisPrefix: "leadgate", redisTopology: { kind: "cluster" as const, nodes: [] } };
    expect(queuePrefix(cluster, "crm-delivery")).toBe("{leadgate.crm-delivery}");
    const prefixes = QUEUE_NAMES.map((name) => queuePrefix(cluster, name));
    expect(new Set(prefixes).size).toBe(QUEUE_NAMES.length);
  });
});
