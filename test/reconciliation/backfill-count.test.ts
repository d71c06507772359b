// A backfill's count of the provider's leads is bounded in the request (api.md backfill row): done
// within 10 s, a dry run answers `200 { matched }`; else `202 { id, matched: null }` and the count goes
// on in the worker (`counting`, then `matched`), the connection's other backfills and counts refused
// meanwhile. Against a fake Yelp on loopback whose lead-id list answers slowly, so a count of its
// three pages takes longer than 10 s; a real worker, and a real API process killed mid-count.
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { useFakeYelp, yelpLead } from "../support/fake-provider-leads.js";
import { useApp } from "../support/harness.js";
import { freePort } from "../support/process.js";
import { waitFor } from "../support/wait.js";

const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();
/** Each page of the slow list answers after this: three pages take 15 s. */
const SLOW_PAGE_MS = 5_000;

describe("backfill counts that take longer than the request may", () => {
  const yelp = useFakeYelp();
  const app = useApp({
    worker: true,
    env: () => ({
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      YELP_WEBHOOK_TOKEN: "yelp-platform-token-0123456789",
      YELP_API_BASE_URL: yelp.url,
      BACKFILL_MAX_DAYS: "30",
      JOB_BACKOFF_BASE_MS: "50",
      DISPATCHER_INTERVAL_MS: "300",
    }),
  });

  let count = 0;
  /** A Yelp connection with 25 leads in the last day (three pages), whose list answers slowly. */
  const slowConnection = async () => {
    const tenant = await createTenant(app.url);
    const business = `bizCount_${String(++count).padStart(6, "0")}`;
    const created = await tenant.admin.post("/admin/connections", {
      provider: "yelp",
      externalAccountId: business,
      displayName: "Counted",
      inboundAuth: { type: "none" },
    });
    expect(created.status).toBe(201);
    const id = created.body.connection.id as string;
    const patched = await app.operator.patch(`/admin/connections/${id}`, {
      credentials: { accessToken: `token-${business}` },
    });
    expect(patched.status).toBe(200);
    yelp.leads.set(
      business,
      Array.from({ length: 25 }, (_, i) => yelpLead(`${business}_lead${i}`, 60 + i)),
    );
    yelp.slow.set(business, SLOW_PAGE_MS);
    return { tenant, id, business };
  };
  const window = { from: hoursAgo(24), to: hoursAgo(0.5) };
  const timed = async <T>(call: () => Promise<T>) => {
    const started = Date.now();
    const answer = await call();
    return { answer, ms: Date.now() - started };
  };
  const receiptsOf = (connectionId: string) =>
    app.sql
      .query("SELECT 1 FROM receipts WHERE connection_id = $1", [connectionId])
      .then((result) => result.rowCount);

  it("a dry run answers 202 { id, matched: null } after 10 s; the worker goes on counting (counting, then matched); meanwhile the connection's backfills and counts are 409; nothing is ingested", async () => {
    const c = await slowConnection();
    const { answer: dry, ms } = await timed(() =>
      c.tenant.admin.post(`/admin/connections/${c.id}/backfill`, { ...window, dryRun: true }),
    );
    expect(dry.status).toBe(202);
    expect(dry.body).toEqual({ id: expect.any(String), matched: null });
    expect(ms).toBeGreaterThanOrEqual(9_500);
    expect(ms).toBeLessThan(14_000);
    const id = dry.body.id as string;
    expect((await c.tenant.admin.get(`/admin/backfills/${id}`)).body).toEqual({
      id,
      connectionId: c.id,
      status: "counting",
      matched: null,
      ingested: 0,
      duplicates: 0,
    });

    // While it counts: another count, and a backfill, of the connection are refused at once.
    for (const body of [{ ...window, dryRun: true }, window]) {
      const { answer, ms: refusedIn } = await timed(() =>
        c.tenant.admin.post(`/admin/connections/${c.id}/backfill`, body),
      );
      expect([answer.status, answer.body.error]).toEqual([409, "backfill_in_progress"]);
      expect(refusedIn).toBeLessThan(2_000);
    }

    yelp.slow.delete(c.business);
    const done = await waitFor(
      () => c.tenant.admin.get(`/admin/backfills/${id}`),
      (answer) => answer.body.status !== "counting",
      40_000,
    );
    expect(done.body).toEqual({
      id,
      connectionId: c.id,
      status: "done",
      matched: 25,
      ingested: 0,
      duplicates: 0,
    });
    expect(await receiptsOf(c.id)).toBe(0);

    // Counted quickly now: 200 { matched }, and the connection may be counted again.
    const quick = await c.tenant.admin.post(`/admin/connections/${c.id}/backfill`, {
      ...window,
      dryRun: true,
    });
    expect([quick.status, quick.body]).toEqual([200, { matched: 25 }]);
    const { rows } = await app.sql.query<{ status: string }>(
      "SELECT status FROM backfills WHERE connection_id = $1",
      [c.id],
    );
    expect(rows).toEqual([{ status: "done" }]);
    expect(await receiptsOf(c.id)).toBe(0);
  }, 90_000);

  it("a count the provider keeps failing in the worker ends failed with the error; the connection may be counted again", async () => {
    const c = await slowConnection();
    const dry = await c.tenant.admin.post(`/admin/connections/${c.id}/backfill`, { ...window, dryRun: true });
    expect(dry.status).toBe(202);
    yelp.failing.add(c.business);
    const failed = await waitFor(
      () => c.tenant.admin.get(`/admin/backfills/${dry.body.id}`),
      (answer) => answer.body.status !== "counting",
      60_000,
    );
    expect(failed.body).toMatchObject({ status: "failed", matched: null, error: "http_500" });
    yelp.failing.delete(c.business);
    yelp.slow.delete(c.business);
    const again = await c.tenant.admin.post(`/admin/connections/${c.id}/backfill`, {
      ...window,
      dryRun: true,
    });
    expect([again.status, again.body]).toEqual([200, { matched: 25 }]);
  }, 90_000);

  it("a backfill whose count passes 10 s answers 202 { id, matched: null }; its run in the worker counts and ingests", async () => {
    const c = await slowConnection();
    const { answer: started, ms } = await timed(() =>
      c.tenant.admin.post(`/admin/connections/${c.id}/backfill`, window),
    );
    expect(started.status).toBe(202);
    expect(started.body).toEqual({ id: expect.any(String), matched: null });
    expect(ms).toBeLessThan(14_000);
    expect((await c.tenant.admin.get(`/admin/backfills/${started.body.id}`)).body).toMatchObject({
      status: "running",
      matched: null,
    });
    yelp.slow.delete(c.business);
    const done = await waitFor(
      () => c.tenant.admin.get(`/admin/backfills/${started.body.id}`),
      (answer) => answer.body.status !== "running",
      60_000,
    );
    expect(done.body).toMatchObject({ status: "done", matched: 25, ingested: 25, duplicates: 0 });
    expect(await receiptsOf(c.id)).toBe(25);
  }, 90_000);

  it("an API killed while it counts leaves no count running for ever: it ends failed (interrupted), and the connection may be counted again", async () => {
    const c = await slowConnection();
    const port = await freePort();
    const api = app.spawn("dist/main.js", { PORT: String(port) });
    await api.waitFor(/api listening/);
    const pending = fetch(`http://127.0.0.1:${port}/admin/connections/${c.id}/backfill`, {
      method: "POST",
      headers: { authorization: `Bearer ${c.tenant.key}`, "content-type": "application/json" },
      body: JSON.stringify({ ...window, dryRun: true }),
    }).catch((error: unknown) => error);
    await waitFor(
      () => Promise.resolve(yelp.listCalls(c.business).length),
      (n) => n >= 1,
    );
    api.child.kill("SIGKILL");
    await api.exited;
    expect(String(await pending)).toMatch(/fetch failed/); // no answer came

    const { rows } = await app.sql.query<{ id: string; status: string }>(
      "SELECT id, status FROM backfills WHERE connection_id = $1",
      [c.id],
    );
    expect(rows).toEqual([{ id: expect.any(String), status: "counting" }]);
    const id = rows[0]!.id;
    // Until a count in a request could still be going on, it shows as counting.
    expect((await c.tenant.admin.get(`/admin/backfills/${id}`)).body.status).toBe("counting");
    await app.sql.query("UPDATE backfills SET created_at = now() - interval '5 minutes' WHERE id = $1", [id]);
    expect((await c.tenant.admin.get(`/admin/backfills/${id}`)).body).toEqual({
      id,
      connectionId: c.id,
      status: "failed",
      matched: null,
      ingested: 0,
      duplicates: 0,
      error: "interrupted",
    });
    yelp.slow.delete(c.business);
    const again = await c.tenant.admin.post(`/admin/connections/${c.id}/backfill`, {
      ...window,
      dryRun: true,
    });
    expect([again.status, again.body]).toEqual([200, { matched: 25 }]);
  }, 90_000);
});
