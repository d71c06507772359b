// POST /admin/connections/{id}/sync runs (api.md): a call joins the connection's run while one is
// queued; a call while it is running makes one follow-up run that reads the provider once the
// running one ended, and later calls join that follow-up; a call after every run finished starts a
// new one (whatever the clock says); only the runs this route makes count toward 6 per connection in
// 60 s. Accounts connected through the real OAuth flow against fake OAuth, Thumbtack and Yelp
// servers on loopback; the outcomes asserted are the answers, the rows and the provider calls the
// fakes received.
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { providerEnv, useFakeOAuth, useFakeThumbtack, useFakeYelp } from "../support/fake-providers.js";
import { useApp } from "../support/harness.js";
import { connectWithOAuth } from "../support/fake-providers.js";
import { waitFor } from "../support/wait.js";

const ENDED = ["succeeded", "dead", "cancelled"];

describe("POST /admin/connections/{id}/sync: runs", () => {
  const oauth = useFakeOAuth();
  const thumbtack = useFakeThumbtack(oauth.reaches);
  const yelp = useFakeYelp(oauth.reaches);
  // No worker at first: a run stays queued until the second block starts one.
  const app = useApp({
    env: () => ({
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      PUBLIC_BASE_URL: "https://leadgate.agency.example",
      ...providerEnv(yelp.server, thumbtack.server),
      ...oauth.env(),
      JOB_BACKOFF_BASE_MS: "50",
      DISPATCHER_INTERVAL_MS: "300",
    }),
  });

  let businesses = 0;
  const connect = async (tenant: Awaited<ReturnType<typeof createTenant>>) => {
    const business = `7700${String(++businesses).padStart(5, "0")}`; // Thumbtack business ids are digits
    return { business, id: await connectWithOAuth(app, oauth, tenant, "thumbtack", business) };
  };
  const jobsOf = (connectionId: string) =>
    app.sql
      .query<{ operation: string; status: string; job_key: string }>(
        "SELECT operation, status, job_key FROM jobs WHERE connection_id = $1 ORDER BY created_at, job_key",
        [connectionId],
      )
      .then((result) => result.rows);
  const allEnded = (connectionId: string, count: number) =>
    waitFor(
      () => jobsOf(connectionId),
      (jobs) => jobs.length === count && jobs.every((job) => ENDED.includes(job.status)),
      30_000,
    );
  /** Reconciliation's calls to the business's negotiations list (a run that reconciles makes one). */
  const negotiationReads = (business: string) =>
    thumbtack.server.received.filter(
      (request) =>
        request.method === "GET" && request.path.startsWith(`/api/v4/businesses/${business}/negotiations`),
    ).length;

  describe("while no worker runs", () => {
    it("concurrent calls make one run; every call while it is queued joins it (same id, coalesced) and none counts toward the limit", async () => {
      const tenant = await createTenant(app.url);
      const c = await connect(tenant);
      const sync = () => tenant.admin.post(`/admin/connections/${c.id}/sync`);

      const racing = await Promise.all(Array.from({ length: 5 }, sync));
      expect(racing.map((answer) => answer.status)).toEqual([202, 202, 202, 202, 202]);
      const runId = racing[0]!.body.run.id as string;
      expect(runId).toEqual(expect.any(String));
      for (const answer of racing) {
        expect(answer.body.connection.id).toBe(c.id);
        expect(answer.body.run).toEqual({ id: runId, status: "queued", coalesced: expect.any(Boolean) });
      }
      expect(racing.filter((answer) => answer.body.run.coalesced === false)).toHaveLength(1);

      // Three more while it is queued: eight calls in all, over the limit of six, none refused.
      for (let i = 0; i < 3; i++) {
        const joined = await sync();
        expect([joined.status, joined.body.run]).toEqual([
          202,
          { id: runId, status: "queued", coalesced: true },
        ]);
      }
      // One run: one registration job beside the connect's own, one reconciliation job.
      const jobs = await jobsOf(c.id);
      expect(jobs.filter((job) => job.operation === "provider-sync")).toHaveLength(2);
      expect(jobs.filter((job) => job.operation === "reconciliation")).toHaveLength(1);
      const audit = await app.sql.query(
        "SELECT count(*)::int AS n FROM audit_entries WHERE action = 'connection.sync' AND target_id = $1",
        [c.id],
      );
      expect(audit.rows[0].n).toBe(8);
    });
  });

  describe("with a worker", () => {
    beforeAll(async () => {
      await app.startWorker();
    });

    it("right after connect a call reconciles; once its run finished, the next call starts a new run that reconciles again, within the same minute", async () => {
      const tenant = await createTenant(app.url);
      const c = await connect(tenant);
      await allEnded(c.id, 1); // the connect's registration
      const sync = () => tenant.admin.post(`/admin/connections/${c.id}/sync`);

      const first = await sync();
      expect([first.status, first.body.run]).toEqual([
        202,
        { id: expect.any(String), status: "queued", coalesced: false },
      ]);
      await allEnded(c.id, 3);
      expect(negotiationReads(c.business)).toBe(1);

      const second = await sync();
      expect(second.body.run).toEqual({ id: expect.any(String), status: "queued", coalesced: false });
      expect(second.body.run.id).not.toBe(first.body.run.id);
      await allEnded(c.id, 5);
      expect(negotiationReads(c.business)).toBe(2);
    });

    it("a call while a run is running makes one follow-up (two calls at once too), later calls join it, and it reads the provider once the running run ended", async () => {
      const tenant = await createTenant(app.url);
      const c = await connect(tenant);
      await allEnded(c.id, 1);
      const sync = () => tenant.admin.post(`/admin/connections/${c.id}/sync`);
      // The business's negotiations list (the run's provider read) answers only once released.
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      thumbtack.state.negotiations = { status: 404, body: {}, until: held };
      let first: string;
      let followUp: string;
      try {
        const started = await sync();
        expect(started.body.run).toEqual({ id: expect.any(String), status: "queued", coalesced: false });
        first = started.body.run.id as string;
        // The run is running: it is reading the provider.
        await waitFor(
          () => Promise.resolve(negotiationReads(c.business)),
          (n) => n === 1,
        );

        const racing = await Promise.all([sync(), sync()]);
        expect(racing.map((answer) => answer.status)).toEqual([202, 202]);
        followUp = racing[0].body.run.id;
        expect(followUp).not.toBe(first);
        const runs = racing.map((answer) => answer.body.run as { coalesced: boolean });
        expect(runs.sort((x, y) => Number(x.coalesced) - Number(y.coalesced))).toEqual([
          { id: followUp, status: "queued", coalesced: false },
          { id: followUp, status: "queued", coalesced: true },
        ]);
        const later = await sync();
        expect([later.status, later.body.run]).toEqual([
          202,
          { id: followUp, status: "queued", coalesced: true },
        ]);
        const followUps = await app.sql.query("SELECT id FROM sync_runs WHERE follows_run_id = $1", [first]);
        expect(followUps.rows).toEqual([{ id: followUp }]);
        // Nothing of the follow-up is made while the first run runs.
        expect((await jobsOf(c.id)).filter((job) => job.operation === "reconciliation")).toHaveLength(1);
      } finally {
        release();
        thumbtack.state.negotiations = undefined;
      }

      // The follow-up's jobs run and read the provider again, after every job of the first run ended.
      await allEnded(c.id, 5);
      expect((await jobsOf(c.id)).map((job) => job.job_key)).toContain(
        `reconciliation:${c.id}.run.${followUp}`,
      );
      const reads = thumbtack.server.received.filter((request) =>
        request.path.startsWith(`/api/v4/businesses/${c.business}/negotiations`),
      );
      expect(reads).toHaveLength(2);
      const ended = await app.sql.query<{ at: Date }>(
        `SELECT max(j.completed_at) AS at FROM sync_runs r
         JOIN jobs j ON j.id IN (r.registration_job_id, r.reconciliation_job_id) WHERE r.id = $1`,
        [first],
      );
      expect(reads[1]!.at).toBeGreaterThanOrEqual(ended.rows[0]!.at.getTime());

      // Every run finished: the next call starts a new one.
      const next = await sync();
      expect(next.body.run).toEqual({ id: expect.any(String), status: "queued", coalesced: false });
      expect([first, followUp]).not.toContain(next.body.run.id);
      await allEnded(c.id, 7);
    });

    it("six runs started by the route in 60 s; the seventh call is 429 rate_limited with Retry-After and writes nothing; the connect's run counts for nothing", async () => {
      const tenant = await createTenant(app.url);
      const c = await connect(tenant);
      await allEnded(c.id, 1);
      for (let run = 1; run <= 6; run++) {
        const answer = await tenant.admin.post(`/admin/connections/${c.id}/sync`);
        expect([answer.status, answer.body.run?.coalesced]).toEqual([202, false]);
        await allEnded(c.id, 1 + 2 * run);
      }
      const limited = await tenant.admin.post(`/admin/connections/${c.id}/sync`);
      expect(limited.status).toBe(429);
      expect(limited.body).toEqual({ error: "rate_limited", message: expect.any(String) });
      const retryAfter = Number(limited.headers.get("retry-after"));
      expect(Number.isInteger(retryAfter)).toBe(true);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
      expect(await jobsOf(c.id)).toHaveLength(13);
      const audit = await app.sql.query(
        "SELECT count(*)::int AS n FROM audit_entries WHERE action = 'connection.sync' AND target_id = $1",
        [c.id],
      );
      expect(audit.rows[0].n).toBe(6);
      // Another connection of the tenant has a limit of its own.
      const other = await connect(tenant);
      expect((await tenant.admin.post(`/admin/connections/${other.id}/sync`)).status).toBe(202);
    });
  });
});
