// Redis Cluster (REDIS_CLUSTER_NODES, api.md "Running"), a smoke scenario: a
// three-master cluster on loopback of this file's own, the API and worker processes (dist/) pointed
// at it, events ingested over several connections and delivered to a fake CRM. Every accepted event
// reaches the CRM once; each queue's keys share one slot (its hash tag) and the queues spread over
// more than one master; the ingest limiter counts on the cluster (it batches many connections'
// keys, which live on different masters) and still refuses exactly what is over the limit.
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { Cluster } from "ioredis";
import { QUEUE_NAMES, queuePrefix } from "../../src/queues/queue-names.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import { freePort, type Spawned } from "../support/process.js";
import { type RedisCluster, startRedisCluster } from "../support/redis-cluster.js";
import type { TestConnection } from "../support/tenants.js";
import { waitFor } from "../support/wait.js";

const LIMIT = 20;
const CONNECTIONS = 8;
const PER_CONNECTION = 10;
const OVER = 5;

describe("Redis Cluster: ingest → CRM on three masters", () => {
  let cluster: RedisCluster;
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  });
  const crm = useFakeServer({ status: 200, body: {} });
  // The in-process API (on the cluster too) only creates the connections through the real service.
  const app = useApp({
    env: () => ({
      REDIS_CLUSTER_NODES: cluster.nodes,
      WEBHOOK_RATE_LIMIT: String(LIMIT),
      WEBHOOK_RATE_LIMIT_WINDOW_SECONDS: "3600",
    }),
  });
  // After the fixture's own afterAll (declared later, runs later): the processes stop first.
  afterAll(async () => {
    await cluster?.stop();
  });
  let api: Spawned;
  let apiUrl: string;
  let redis: Cluster;

  beforeAll(async () => {
    const port = await freePort();
    apiUrl = `http://127.0.0.1:${port}`;
    api = app.spawn("dist/main.js", { PORT: String(port) });
    const worker = app.spawn("dist/worker.js");
    await Promise.all([api.waitFor(/api listening/), worker.waitFor(/worker started/)]);
    redis = new Cluster([{ host: "127.0.0.1", port: cluster.ports[0]! }]);
    app.defer(() => Promise.resolve(redis.disconnect()));
    await once(redis, "ready");
  });

  const deliver = (c: TestConnection, submissionId: string) =>
    post(
      `${apiUrl}/webhooks/staticforms/${c.connectionId}`,
      { event: "form.submitted", data: { submissionId, formData: { name: submissionId } } },
      { authorization: `Bearer ${c.secrets.bearerToken}` },
    );

  it("delivers every accepted event to the CRM once; queues spread over the masters", async () => {
    const started = Date.now();
    const connections: TestConnection[] = [];
    for (let n = 0; n <= CONNECTIONS; n++) {
      connections.push(
        await app.createConnection({
          provider: "staticforms",
          inboundAuth: { type: "bearer" },
          settings: { crmDestination: { url: `${crm.url}/crm` } },
        }),
      );
    }
    const busy = connections.pop()!;
    const run = randomBytes(3).toString("hex");
    // Concurrent deliveries over all connections: the limiter's batches hold keys of many slots.
    const sent = [
      ...connections.flatMap((c, n) =>
        Array.from({ length: PER_CONNECTION }, (_, i) => ({ c, id: `${run}-c${n}-${i}` })),
      ),
      ...Array.from({ length: LIMIT + OVER }, (_, i) => ({ c: busy, id: `${run}-busy-${i}` })),
    ];
    const answers = await Promise.all(sent.map(({ c, id }) => deliver(c, id)));
    const accepted = sent.filter((_, i) => answers[i]!.status === 202).map(({ id }) => id);
    const limited = answers.filter((answer) => answer.status === 429);
    expect(accepted).toHaveLength(CONNECTIONS * PER_CONNECTION + LIMIT);
    expect(limited).toHaveLength(OVER);
    expect(limited.every((answer) => answer.body.error === "rate_limited")).toBe(true);

    // Every accepted event reaches the CRM, once.
    await waitFor(
      () => Promise.resolve(crm.received.length),
      (n) => n >= accepted.length,
      40_000,
    );
    const names = crm.received.map((request) => accepted.find((id) => request.body.includes(`"${id}"`)));
    expect(names.filter((id) => id === undefined)).toEqual([]);
    expect(new Set(names).size).toBe(accepted.length);
    expect(crm.received).toHaveLength(accepted.length);
    // The CRM answering comes before the worker commits the job's success: wait for the commits.
    const jobRows = () =>
      app.sql
        .query<{ operation: string; status: string; n: number }>(
          `SELECT operation, status, count(*)::int AS n FROM jobs GROUP BY operation, status ORDER BY 1, 2`,
        )
        .then(({ rows }) => rows);
    const rows = await waitFor(jobRows, (found) => found.every((row) => row.status === "succeeded"), 10_000);
    expect(rows).toEqual([
      { operation: "crm-delivery", status: "succeeded", n: accepted.length },
      { operation: "lead-upsert", status: "succeeded", n: accepted.length },
    ]);

    // The limiter counted every delivery on the cluster (none let through unchecked).
    const metrics = await (await fetch(`${apiUrl}/metrics`)).text();
    expect(/^leadgate_rate_limit_unchecked_total (\d+)/m.exec(metrics)?.[1] ?? "0").toBe("0");

    // Where the keys live: per master, the queues whose keys it holds.
    const masters = redis.nodes("master");
    const prefix = app.config.redisPrefix;
    const held = await Promise.all(masters.map((node) => node.keys(`{${prefix}.*`)));
    const queuesOn = held.map((keys) => new Set(keys.map((key) => /^\{[^.]+\.([^}]+)\}/.exec(key)?.[1])));
    const used = queuesOn.filter((queues) => queues.size > 0);
    expect(used.length).toBeGreaterThan(1);
    // No queue is split over two masters, and each queue's keys share one slot (its hash tag).
    const allQueues = queuesOn.flatMap((queues) => [...queues]);
    expect(new Set(allQueues).size).toBe(allQueues.length);
    for (const name of ["lead-upsert", "crm-delivery"] as const) {
      const keys = held.flat().filter((key) => key.startsWith(`${queuePrefix(app.config, name)}:`));
      expect(keys.length).toBeGreaterThan(1);
      const slots = await Promise.all(keys.map((key) => redis.cluster("KEYSLOT", key)));
      expect(new Set(slots).size).toBe(1);
    }
    const queueSlots = await Promise.all(
      QUEUE_NAMES.map((name) => redis.cluster("KEYSLOT", `${queuePrefix(app.config, name)}:x`)),
    );
    // The rate limiter's keys (one per connection and window) sit on more than one master too.
    const rateKeys = await Promise.all(masters.map((node) => node.keys(`${prefix}:rate:*`)));
    expect(rateKeys.flat()).toHaveLength(CONNECTIONS + 1);
    expect(rateKeys.filter((keys) => keys.length > 0).length).toBeGreaterThan(1);

    console.log(
      JSON.stringify({
        masters: masters.length,
        accepted: accepted.length,
        limited: limited.length,
        crmReceived: crm.received.length,
        queuesPerMaster: queuesOn.map((queues) => queues.size),
        distinctQueueSlots: new Set(queueSlots).size,
        rateKeysPerMaster: rateKeys.map((keys) => keys.length),
        seconds: (Date.now() - started) / 1000,
      }),
    );
  }, 60_000);
});
