// One tenant cannot starve the others, on the outbound side: a destination's circuit
// opens after consecutive failures (its jobs wait without using attempts, the opening and closing
// are recorded in Postgres, a probe closes it and the jobs flow), and one worker makes at most
// DESTINATION_MAX_CONCURRENCY calls at once to one destination. Real CRMs on loopback.
import { OPERATOR_KEY } from "../support/admin.js";
import { fakeServer, type TestApp, useApp } from "../support/harness.js";
import { post } from "../support/http.js";
import type { TestConnection } from "../support/tenants.js";
import { waitFor } from "../support/wait.js";

interface JobRow {
  id: string;
  status: string;
  attempts: number;
  waiting_for: string | null;
  next_attempt_at: Date;
}

/** A Static Forms connection of a tenant of its own, delivering to the CRM at `crmUrl`. */
const connectionOf = (app: TestApp, crmUrl: string) =>
  app.createConnection({
    provider: "staticforms",
    inboundAuth: { type: "bearer" },
    settings: { crmDestination: { url: `${crmUrl}/hook` } },
  });

/** Delivers submission `id` to `c` and expects it accepted. */
async function submitTo(app: TestApp, c: TestConnection, id: string): Promise<void> {
  const answer = await post(
    `${app.url}/webhooks/staticforms/${c.connectionId}`,
    {
      event: "form.submitted",
      data: { submissionId: id, formData: { name: "Ann", email: "a@example.test" } },
    },
    { authorization: `Bearer ${c.secrets.bearerToken}` },
  );
  expect(answer.status).toBe(202);
}

/** The tenant's CRM delivery jobs, oldest first. */
const crmJobsOf = (app: TestApp, tenantId: string) =>
  app.sql
    .query<JobRow>(
      `SELECT id, status, attempts, waiting_for, next_attempt_at FROM jobs
       WHERE tenant_id = $1 AND operation = 'crm-delivery' ORDER BY created_at`,
      [tenantId],
    )
    .then((result) => result.rows);

describe("fairness between destinations", () => {
  const app = useApp({
    worker: true,
    env: {
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      CIRCUIT_FAILURE_THRESHOLD: "3",
      // No probe comes due by itself while a test runs, however slow the machine: each test makes
      // its probe due when its destination is well again.
      CIRCUIT_PROBE_SECONDS: "600",
      DESTINATION_MAX_CONCURRENCY: "2",
      JOB_BACKOFF_BASE_MS: "50",
      SIDE_EFFECT_TIMEOUT_MS: "3000",
      DISPATCHER_INTERVAL_MS: "200",
    },
  });

  const connectionTo = (crmUrl: string) => connectionOf(app, crmUrl);
  const submit = (c: TestConnection, id: string) => submitTo(app, c, id);
  const crmJobs = (tenantId: string) => crmJobsOf(app, tenantId);
  const circuit = (origin: string) =>
    app.sql
      .query("SELECT state, consecutive_failures, last_error FROM destination_circuits WHERE origin = $1", [
        origin,
      ])
      .then((result) => result.rows[0] as Record<string, unknown> | undefined);
  /** The destination is well again: its probe is due now, and so is one waiting job (which probes). */
  const probeNow = async (origin: string, job: { id: string }) => {
    await app.sql.query("UPDATE destination_circuits SET probe_at = now() WHERE origin = $1", [origin]);
    await app.sql.query("UPDATE jobs SET next_attempt_at = now() WHERE id = $1", [job.id]);
  };
  const openings = (origin: string) =>
    app.sql
      .query<{ opened_at: Date; closed_at: Date | null; failures: number; last_error: string }>(
        "SELECT opened_at, closed_at, failures, last_error FROM destination_circuit_openings WHERE origin = $1",
        [origin],
      )
      .then((result) => result.rows);

  it("opens the circuit after 3 failures: later jobs wait for it without an attempt; a probe closes it and all succeed", async () => {
    let healthy = false;
    const crm = await fakeServer({ status: 200, body: {} }, () =>
      healthy ? undefined : { status: 503, body: {} },
    );
    const c = await connectionTo(crm.url);
    for (const id of ["a1", "a2", "a3"]) await submit(c, id);
    await waitFor(
      () => circuit(crm.url),
      (row) => row?.state === "open",
    );
    expect(await circuit(crm.url)).toMatchObject({ last_error: "http_503" });
    // Its probe is due CIRCUIT_PROBE_SECONDS after it opened.
    const { rows: due } = await app.sql.query<{ seconds: number }>(
      "SELECT extract(epoch FROM probe_at - opened_at)::float8 AS seconds FROM destination_circuits WHERE origin = $1",
      [crm.url],
    );
    expect(due).toHaveLength(1);
    expect(due[0]!.seconds).toBeCloseTo(600, 2); // probe_at is kept to the millisecond
    expect(await openings(crm.url)).toEqual([
      expect.objectContaining({ closed_at: null, failures: 3, last_error: "http_503" }),
    ]);
    // Visible as a metric (a count of open circuits, no per-origin labels).
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    expect(metrics).toMatch(/^leadgate_destination_circuits_open 1$/m);

    // While it is open, new jobs wait for the circuit and use no attempt; the CRM hears nothing.
    const calls = crm.received.length;
    for (const id of ["b1", "b2"]) await submit(c, id);
    const waiting = await waitFor(
      () => crmJobs(c.tenantId),
      // A new delivery is created waiting for its lead-upsert (`dependency`): past that, for the circuit.
      (rows) =>
        rows.length === 5 &&
        rows.every((row) => row.status === "waiting" && row.waiting_for !== "dependency"),
    );
    expect(waiting.map((row) => row.waiting_for)).toEqual(Array(5).fill("circuit"));
    expect(waiting.slice(3).map((row) => row.attempts)).toEqual([0, 0]);
    const view = await app.operator.get(`/admin/jobs/${waiting[4]!.id}`);
    expect(view.body).toMatchObject({ status: "waiting", waitingFor: "circuit", attempts: 0 });
    expect(crm.received.length).toBe(calls);

    // The CRM recovers and its probe comes due (probeNow): one probe goes out, closes the circuit,
    // and every job succeeds.
    healthy = true;
    await probeNow(crm.url, waiting[0]!);
    const done = await waitFor(
      () => crmJobs(c.tenantId),
      (rows) => rows.every((row) => row.status === "succeeded"),
    );
    expect(done.slice(3).map((row) => row.attempts)).toEqual([1, 1]);
    expect(await circuit(crm.url)).toMatchObject({ state: "closed", consecutive_failures: 0 });
    const [opening] = await openings(crm.url);
    expect(opening!.closed_at).not.toBeNull();
  }, 30_000);

  it("releases the jobs waiting for a circuit as soon as a probe closes it, not at their own wait's end", async () => {
    let healthy = false;
    const crm = await fakeServer({ status: 200, body: {} }, () =>
      healthy ? undefined : { status: 500, body: {} },
    );
    const c = await connectionTo(crm.url);
    for (const id of ["c1", "c2", "c3"]) await submit(c, id);
    await waitFor(
      () => circuit(crm.url),
      (row) => row?.state === "open",
    );
    for (const id of ["d1", "d2", "d3"]) await submit(c, id);
    const waiting = await waitFor(
      () => crmJobs(c.tenantId),
      (rows) => rows.length === 6 && rows.every((row) => row.status === "waiting"),
    );
    // All but one would wait an hour (as if they had come back after a later probe): only the
    // closing can release them in time.
    await app.sql.query(
      "UPDATE jobs SET next_attempt_at = now() + interval '1 hour' WHERE id = ANY($1::uuid[])",
      [waiting.slice(1).map((row) => row.id)],
    );
    healthy = true;
    await probeNow(crm.url, waiting[0]!);
    await waitFor(
      () => crmJobs(c.tenantId),
      (rows) => rows.every((row) => row.status === "succeeded"),
      10_000,
    );
  }, 30_000);

  it("makes at most DESTINATION_MAX_CONCURRENCY calls at once to one destination; the others wait without an attempt", async () => {
    const slow = await fakeServer({ status: 200, delayMs: 400 });
    const c = await connectionTo(slow.url);
    await Promise.all(Array.from({ length: 8 }, (_, i) => submit(c, `slow-${i}`)));
    const done = await waitFor(
      () => crmJobs(c.tenantId),
      (rows) => rows.length === 8 && rows.every((row) => row.status === "succeeded"),
    );
    expect(slow.mostInFlight).toBe(2);
    expect(done.map((row) => row.attempts)).toEqual(Array(8).fill(1));
  }, 30_000);
});

describe("a destination whose circuit opened while its calls hang", () => {
  const app = useApp({
    worker: true,
    env: {
      CIRCUIT_PROBE_SECONDS: "60",
      DESTINATION_MAX_CONCURRENCY: "1",
      SIDE_EFFECT_TIMEOUT_MS: "10000",
    },
  });

  it("its jobs wait for the circuit's probe, not for a slot held by a hung call (they would be back in seconds)", async () => {
    const hanging = await fakeServer({ status: 200, delayMs: 9_000 });
    const c = await connectionOf(app, hanging.url);
    await submitTo(app, c, "held");
    await waitFor(
      () => Promise.resolve(hanging.received.length),
      (n) => n === 1,
    );
    // Another worker's failures opened the circuit meanwhile (its row is what every worker reads).
    const { rows: opened } = await app.sql.query<{ probe_at: Date }>(
      `INSERT INTO destination_circuits (origin, state, consecutive_failures, last_error, opened_at, probe_at)
       VALUES ($1, 'open', 10, 'timeout', now(), now() + interval '60 seconds')
       RETURNING probe_at`,
      [new URL(hanging.url).origin],
    );
    // The held call is now slower than a slot's wait (500 ms), and this worker's view of the
    // circuit as closed (1 s) has expired.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    await submitTo(app, c, "after");
    const jobs = await waitFor(
      () => crmJobsOf(app, c.tenantId),
      (rows) => rows[1]?.status === "waiting" && rows[1].waiting_for !== "dependency",
    );
    expect(jobs[0]).toMatchObject({ status: "running" }); // the held call
    expect(jobs[1]).toMatchObject({ waiting_for: "circuit", attempts: 0 });
    expect(jobs[1]!.next_attempt_at.getTime()).toBeGreaterThanOrEqual(opened[0]!.probe_at.getTime());
    expect(hanging.received).toHaveLength(1);
    await hanging.close(); // the held call fails now, not while the app shuts down
  }, 30_000);
});
