// Static Forms-shaped load: every submission is delivered twice (a first delivery and a retry),
// so half the requests must be answered as duplicates.
// Usage: node load.mjs URL [seconds=10] [connections=32] [authorization-header-value]
// Prints one JSON line: requests/s (every answer), latency percentiles (ms), status counts, and the
// run's length in seconds (to count only some answers per second).
import autocannon from "autocannon";

const [url, seconds = "10", connections = "32", authorization] = process.argv.slice(2);
if (!url) {
  console.error("usage: node load.mjs URL [seconds] [connections] [authorization]");
  process.exit(2);
}
const run = `${process.pid}-${Date.now()}`;
let sent = 0;
const instance = autocannon({
  url,
  method: "POST",
  duration: Number(seconds),
  connections: Number(connections),
  requests: [
    {
      setupRequest(req) {
        const submissionId = `sub_${run}_${Math.floor(sent++ / 2)}`;
        const headers = {
          "content-type": "application/json",
          "idempotency-key": `staticforms:form.submitted:${submissionId}`,
        };
        if (authorization) headers.authorization = authorization;
        const body = JSON.stringify({
          event: "form.submitted",
          timestamp: 1776003725,
          data: {
            submissionId,
            formData: { name: "Load Test", email: "load@example.test", message: "Quote please" },
            apiKey: "sf_bench",
            recipientEmail: "leads@example.test",
            attachments: [],
          },
        });
        return { ...req, headers, body };
      },
    },
  ],
});
const statuses = {};
instance.on("response", (_client, statusCode) => {
  statuses[statusCode] = (statuses[statusCode] ?? 0) + 1;
});
instance.on("done", (r) =>
  console.log(
    JSON.stringify({
      url,
      rps: r.requests.average,
      p50: r.latency.p50,
      p90: r.latency.p90,
      p99: r.latency.p99,
      total: r.requests.total,
      seconds: r.duration,
      errors: r.errors,
      timeouts: r.timeouts,
      statuses,
    }),
  ),
);
