// Prometheus metrics: the API's /metrics (deliveries, ingest latency, queue depth and the age of the
// oldest due job read from Postgres) and the worker's own port (jobs by outcome, durations, dispatcher).
import { randomBytes } from "node:crypto";
import type { RunningApi } from "../support/app.js";
import { useApp } from "../support/harness.js";
import { post } from "../support/http.js";
import { freePort } from "../support/process.js";
import type { TestConnection } from "../support/tenants.js";
import { waitFor } from "../support/wait.js";

/** The value of one sample of a Prometheus text exposition, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  const line = text
    .split("\n")
    .find((l) =>
      l.startsWith(`${name}{`) || l.startsWith(`${name} `)
        ? wanted.every((label) => l.includes(label))
        : false,
    );
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(" ") + 1));
}

describe("metrics", () => {
  const app = useApp({ env: { DISPATCHER_INTERVAL_MS: "300" } });
  let api: RunningApi;
  let idle: RunningApi;
  let worker: ReturnType<typeof app.spawn>;
  let workerMetrics: string;

  beforeAll(async () => {
    api = app.api;
    // A second API process: its delivery counter is its own.
    idle = await app.startApi();
    const port = await freePort();
    workerMetrics = `http://127.0.0.1:${port}/metrics`;
    worker = app.spawn("dist/worker.js", {
      DISPATCHER_INTERVAL_MS: "60000",
      WORKER_METRICS_PORT: String(port),
    });
    await worker.waitFor(/worker started/);
  });

  const deliver = (target: RunningApi, c: TestConnection) =>
    post(
      `${target.url}/webhooks/staticforms/${c.connectionId}`,
      {
        event: "form.submitted",
        data: { submissionId: randomBytes(5).toString("hex"), formData: { name: "Ann" } },
      },
      { authorization: `Bearer ${c.secrets.bearerToken}` },
    );
  const scrape = async (url: string) => (await fetch(url)).text();

  it("count deliveries and jobs, and show waiting work and its age", async () => {
    const c = await app.createConnection({
      provider: "staticforms",
      inboundAuth: { type: "bearer" },
    });
    expect((await deliver(api, c)).status).toBe(202);
    const done = await waitFor(
      () => scrape(workerMetrics),
      (text) =>
        (sample(text, "leadgate_jobs_total", { operation: "lead-upsert", status: "succeeded" }) ?? 0) >= 1,
    );
    expect(
      sample(done, "leadgate_job_duration_seconds_count", { operation: "lead-upsert", status: "succeeded" }),
    ).toBeGreaterThanOrEqual(1);

    const before = await scrape(`${api.url}/metrics`);
    expect(
      sample(before, "leadgate_deliveries_total", { provider: "staticforms", outcome: "accepted" }),
    ).toBe(1);
    expect(sample(before, "leadgate_ingest_duration_seconds_count", { provider: "staticforms" })).toBe(1);
    expect(sample(before, "leadgate_jobs_waiting", { operation: "lead-upsert", status: "queued" })).toBe(0);
    expect(sample(before, "leadgate_job_oldest_due_seconds", { operation: "lead-upsert" })).toBe(0);

    // Two deliveries nobody processes (the worker stopped): queued and due; the oldest one's age grows.
    worker.child.kill("SIGTERM");
    expect(await worker.exited).toEqual({ code: 0, signal: null });
    expect((await deliver(idle, c)).status).toBe(202);
    expect((await deliver(idle, c)).status).toBe(202);
    const after = await waitFor(
      () => scrape(`${api.url}/metrics`),
      (text) => (sample(text, "leadgate_job_oldest_due_seconds", { operation: "lead-upsert" }) ?? 0) >= 1,
    );
    expect(sample(after, "leadgate_jobs_waiting", { operation: "lead-upsert", status: "queued" })).toBe(2);
    expect(
      sample(after, "leadgate_job_oldest_due_seconds", { operation: "lead-upsert" }),
    ).toBeGreaterThanOrEqual(1);
    expect(sample(after, "leadgate_deliveries_total", { provider: "staticforms", outcome: "accepted" })).toBe(
      1,
    ); // per process

    // Rejected before ingestion runs (body parser, Fastify): counted too, by their error code.
    const url = `${api.url}/webhooks/staticforms/${c.connectionId}`;
    const auth = { authorization: `Bearer ${c.secrets.bearerToken}` };
    expect((await post(url, "{not json", auth)).status).toBe(400);
    const plain = await fetch(url, {
      method: "POST",
      headers: { ...auth, "content-type": "text/plain" },
      body: "hi",
    });
    expect(plain.status).toBe(415);
    // Answered by ingestion: a duplicate, an event type not acted on, wrong credentials.
    const again = {
      event: "form.submitted",
      data: { submissionId: "metrics-dup", formData: { name: "Bo" } },
    };
    expect((await post(url, again, auth)).status).toBe(202);
    expect((await post(url, again, auth)).status).toBe(200);
    expect((await post(url, { event: "form.viewed", data: { submissionId: "v1" } }, auth)).status).toBe(200);
    expect((await post(url, again, { authorization: "Bearer wrong" })).status).toBe(401);
    const rejected = await scrape(`${api.url}/metrics`);
    const outcome = (name: string) =>
      sample(rejected, "leadgate_deliveries_total", { provider: "staticforms", outcome: name });
    expect(
      ["accepted", "duplicate", "ignored", "unauthorized", "invalid_envelope", "unsupported_media_type"].map(
        outcome,
      ),
    ).toEqual([2, 1, 1, 1, 1, 1]);
    expect(sample(rejected, "leadgate_ingest_duration_seconds_count", { provider: "staticforms" })).toBe(7);
  });
});
