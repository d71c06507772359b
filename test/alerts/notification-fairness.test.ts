// Notifications share the destination fairness of CRM deliveries: a channel's
// destination (its URL's origin; for email, the SMTP server) has a cap of calls at once per worker
// and a circuit, and a job over the cap gives its worker slot back. Tenant A's webhook channel
// hangs (its receiver never answers within the send timeout); tenant B's answers at once: B's
// notifications still leave at once, while A's calls are held. A channel that keeps failing opens
// its destination's circuit: its notifications wait without using attempts, and the probe that is
// answered releases them all.
import { AlertBook } from "../../src/alerts/alert-book.js";
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { type TestApp, useApp, useFakeServer } from "../support/harness.js";
import { waitFor } from "../support/wait.js";

const SEND_TIMEOUT_MS = 10_000;
/** More than the notification worker's slots (10): without a cap, A's hanging calls take them all. */
const A_ALERTS = 14;

const ENV = {
  LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
  SIDE_EFFECT_TIMEOUT_MS: String(SEND_TIMEOUT_MS),
  DISPATCHER_INTERVAL_MS: "500",
  JOB_BACKOFF_BASE_MS: "50",
  CIRCUIT_FAILURE_THRESHOLD: "3",
  CIRCUIT_PROBE_SECONDS: "600",
};

/** Raises alert `n` of `tenantId` in `app`: a notification job per channel of the tenant. */
const raiseIn = (app: TestApp, tenantId: string, n: number) =>
  app.api.app.get(AlertBook, { strict: false }).raise(undefined, {
    tenantId,
    type: "webhooks.missing",
    errorCode: `missing_${n}`,
    summary: "Reconciliation found leads no webhook delivered.",
  });

describe("alerts: notification fairness between tenants", () => {
  const hanging = useFakeServer({ status: 204, delayMs: SEND_TIMEOUT_MS + 1_000 });
  const fast = useFakeServer({ status: 204 });
  const app = useApp({ worker: true, env: ENV });
  const raise = (tenantId: string, n: number) => raiseIn(app, tenantId, n);

  it("tenant A's hanging webhook channel does not delay tenant B's notification (< 5 s, while A's calls are held)", async () => {
    const a = await createTenant(app.url);
    const b = await createTenant(app.url);
    for (const [tenant, url] of [
      [a, `${hanging.url}/a`],
      [b, `${fast.url}/b`],
    ] as const) {
      const channel = await tenant.admin.post("/admin/notification-channels", { type: "webhook", url });
      expect(channel.status).toBe(201);
    }
    for (let n = 0; n < A_ALERTS; n++) await raise(a.tenantId, n);
    // A's receiver holds the calls that went out (never answering them)...
    await waitFor(
      () => Promise.resolve(hanging.received.length),
      (n) => n >= 5,
    );
    const firstHeld = hanging.received[0]!.at;
    // ...and each of A's other notifications found the destination's cap full and gave its worker
    // slot back (waiting, no attempt used): the worker's slots are as free as A leaves them.
    await waitFor(
      async () =>
        (
          await app.sql.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM jobs WHERE operation = 'notification' AND tenant_id = $1
               AND status = 'waiting' AND waiting_for = 'quota'`,
            [a.tenantId],
          )
        ).rows[0]!.n,
      (n) => n === A_ALERTS - hanging.received.length,
    );

    const raisedAt = Date.now();
    const id = await raise(b.tenantId, 0);
    const [delivered] = await waitFor(
      () => Promise.resolve(fast.received.filter((request) => request.body.includes(id))),
      (requests) => requests.length === 1,
      SEND_TIMEOUT_MS * 2,
    );
    const latencyMs = delivered!.at - raisedAt;
    process.stdout.write(
      `[alerts] B's notification while A's channel hangs: ${latencyMs} ms; A's calls held: ${hanging.received.length}, at most ${hanging.mostInFlight} at once\n`,
    );
    expect(latencyMs).toBeLessThan(5_000); // waiting behind A's calls would take SEND_TIMEOUT_MS
    // A's calls were still held (none had reached the send timeout) when B's arrived.
    expect(delivered!.at - firstHeld).toBeLessThan(SEND_TIMEOUT_MS);
    // The cap: half of the notification worker's 10 slots for one destination.
    expect(hanging.mostInFlight).toBeLessThanOrEqual(5);
  });
});

// An app of its own: the first one's held calls and waiting jobs are gone with it, so settled() below
// waits for this test's jobs only.
describe("alerts: a failing notification destination's circuit", () => {
  let failing = true;
  const flaky = useFakeServer({ status: 204 }, () => (failing ? { status: 503 } : undefined));
  const app = useApp({ worker: true, env: ENV });
  const raise = (tenantId: string, n: number) => raiseIn(app, tenantId, n);

  it("a channel that keeps failing opens its destination's circuit: its notifications wait without using attempts; the answered probe releases them all", async () => {
    const c = await createTenant(app.url);
    const channel = await c.admin.post("/admin/notification-channels", {
      type: "webhook",
      url: `${flaky.url}/c`,
    });
    expect(channel.status).toBe(201);
    const ids: string[] = [];
    for (let n = 0; n < 6; n++) ids.push(await raise(c.tenantId, n));
    const jobs = () =>
      app.sql
        .query<{ id: string; status: string; waitingFor: string | null; attempts: number }>(
          `SELECT id, status, waiting_for AS "waitingFor", attempts FROM jobs
           WHERE operation = 'notification' AND tenant_id = $1 ORDER BY id`,
          [c.tenantId],
        )
        .then((result) => result.rows);
    // Three 503s open the circuit (CIRCUIT_FAILURE_THRESHOLD); every job then waits for it.
    const waiting = await waitFor(jobs, (rows) =>
      rows.every((row) => row.status === "waiting" && row.waitingFor === "circuit"),
    );
    const origin = new URL(flaky.url).origin;
    const { rows: circuits } = await app.sql.query<{ state: string }>(
      "SELECT state FROM destination_circuits WHERE origin = $1",
      [origin],
    );
    expect(circuits).toEqual([{ state: "open" }]);
    const attemptsBefore = waiting.reduce((sum, row) => sum + row.attempts, 0);
    // The failures that opened it, and the calls in flight at that moment (at most the destination's
    // cap of 5, less the one whose failure opened it): what a loaded machine lets start before.
    expect(attemptsBefore).toBeLessThanOrEqual(3 + 5 - 1);
    const callsBefore = flaky.received.length;
    // A dispatcher pass, and BullMQ drained of what it released: a job due before the probe would
    // have called by then.
    await app.settled();
    expect(flaky.received.length).toBe(callsBefore); // waiting, not calling
    expect(await jobs()).toEqual(waiting);

    // The destination is well again. Its probe is due now (instead of in 10 minutes), and one job's
    // wait is over: it probes; the answer closes the circuit and ends the other jobs' waits at once.
    failing = false;
    await app.sql.query("UPDATE destination_circuits SET probe_at = now() WHERE origin = $1", [origin]);
    await app.sql.query("UPDATE jobs SET next_attempt_at = now() WHERE id = $1", [waiting[0]!.id]);
    await waitFor(jobs, (rows) => rows.every((row) => row.status === "succeeded"));
    const delivered = flaky.received.slice(callsBefore).map((request) => request.body);
    for (const id of ids) expect(delivered.some((body) => body.includes(id))).toBe(true);
  });
});
