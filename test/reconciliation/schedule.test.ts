// The reconciliation schedule at a small scale with a controllable clock: every connection runs
// once per interval at an offset of its own (not all at once), at most RECONCILE_CONCURRENCY runs
// at once per worker, and the calls never exceed the provider limiter (PROVIDER_RATE_LIMITS).
// The 2,000-connection figures are a benchmark (bench/reconcile.mjs), not a timed test.
import { ReconciliationSweep } from "../../src/reconciliation/reconciliation-sweep.js";
import { useFakeYelp } from "../support/fake-provider-leads.js";
import { useApp } from "../support/harness.js";
import { waitFor } from "../support/wait.js";

const CONNECTIONS = 30;
const INTERVAL_SECONDS = 100;
const STEPS = 10;
const LIST_DELAY_MS = 150;

describe("reconciliation schedule", () => {
  const yelp = useFakeYelp(LIST_DELAY_MS);
  const app = useApp({
    worker: true,
    env: () => ({
      YELP_API_BASE_URL: yelp.url,
      RECONCILE_INTERVAL_SECONDS: String(INTERVAL_SECONDS),
      RECONCILE_CONCURRENCY: "2",
      PROVIDER_RATE_LIMITS: "yelp=5/s",
      JOB_BACKOFF_BASE_MS: "50",
    }),
  });

  it("spreads one run per connection over the interval, two at a time, within Yelp's 5 calls/s", async () => {
    // The test drives the clock: the worker's own real-time sweeps stop first, or one that ran
    // while the connections were being made would note their ticks and the first sweep below
    // (one interval ahead) would run them all.
    const sweep = app.worker.get(ReconciliationSweep);
    await sweep.onModuleDestroy();
    const ids: string[] = [];
    for (let i = 0; i < CONNECTIONS; i++) {
      const created = await app.createConnection({
        provider: "yelp",
        externalAccountId: `bizSchedule_${String(i).padStart(4, "0")}`,
        inboundAuth: { type: "none" },
        credentials: { accessToken: `token-${i}` },
      });
      ids.push(created.connectionId);
    }
    // Connections without an API (Static Forms) or a token are never scheduled.
    await app.createConnection({ provider: "staticforms", inboundAuth: { type: "token" } });
    await app.createConnection({
      provider: "yelp",
      externalAccountId: "bizNoToken",
      inboundAuth: { type: "none" },
    });

    const t0 = Date.now() + 1_000 * INTERVAL_SECONDS;
    expect(await sweep.sweep(new Date(t0))).toBe(0); // first sight: ticks noted, nothing run
    const made: number[] = [];
    for (let step = 1; step <= STEPS; step++) {
      const at = new Date(t0 + (step * INTERVAL_SECONDS * 1000) / STEPS);
      made.push(await sweep.sweep(at));
      expect(await sweep.sweep(at)).toBe(0); // the same moment again (another replica): nothing twice
    }
    expect(made.reduce((sum, n) => sum + n, 0)).toBe(CONNECTIONS);
    expect(Math.max(...made)).toBeLessThanOrEqual(CONNECTIONS / 2);
    expect(made.filter((n) => n > 0).length).toBeGreaterThanOrEqual(STEPS / 2);

    const { rows } = await app.sql.query<{ connection_id: string; runs: string }>(
      `SELECT connection_id, count(*) AS runs FROM jobs WHERE operation = 'reconciliation' GROUP BY connection_id`,
    );
    expect(rows.map((row) => row.connection_id).sort()).toEqual([...ids].sort());
    expect(rows.every((row) => row.runs === "1")).toBe(true);

    await waitFor(
      () =>
        app.sql
          .query<{ n: string }>(
            "SELECT count(*) AS n FROM jobs WHERE operation = 'reconciliation' AND status = 'succeeded'",
          )
          .then((result) => Number(result.rows[0]!.n)),
      (n) => n === CONNECTIONS,
      60_000,
    );
    const calls = yelp.received.filter((request) => request.path.includes("/lead_ids"));
    expect(calls).toHaveLength(CONNECTIONS);
    const starts = calls.map((call) => call.at).sort((a, b) => a - b);
    // At most two lists in flight at once (each takes LIST_DELAY_MS at the fake).
    const inFlight = starts.map(
      (start) => starts.filter((other) => other <= start && other > start - LIST_DELAY_MS).length,
    );
    expect(Math.max(...inFlight)).toBeLessThanOrEqual(2);
    // Never more than 5 calls of the endpoint within any second.
    const perSecond = starts.map(
      (start) => starts.filter((other) => other >= start && other < start + 1000).length,
    );
    expect(Math.max(...perSecond)).toBeLessThanOrEqual(5);
  }, 90_000);
});
