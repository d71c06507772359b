// Backfill (api.md: POST /admin/connections/{id}/backfill, GET /admin/backfills/{id}) against a
// stateful fake Yelp and Thumbtack on loopback: a dry run counts, a run ingests through the
// webhooks' path (receipts with source "backfill"), one backfill per connection at a time, and every
// refusal answers as api.md says.
import { OPERATOR_KEY, createTenant } from "../support/admin.js";
import { useFakeThumbtack, useFakeYelp, yelpLead, yelpWebhook } from "../support/fake-provider-leads.js";
import { useApp } from "../support/harness.js";
import { post } from "../support/http.js";
import { waitFor } from "../support/wait.js";

const YELP_TOKEN = "yelp-platform-token-0123456789";
const hoursAgo = (hours: number) => new Date(Date.now() - hours * 3_600_000).toISOString();

describe("backfill", () => {
  const yelp = useFakeYelp();
  const thumbtack = useFakeThumbtack();
  // No worker at first: a started backfill stays running until the test starts one.
  const app = useApp({
    env: () => ({
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      YELP_WEBHOOK_TOKEN: YELP_TOKEN,
      YELP_API_BASE_URL: yelp.url,
      THUMBTACK_API_BASE_URL: thumbtack.url,
      BACKFILL_MAX_DAYS: "30",
      // Hours-old leads count as fresh: only the receipt's source tells the backfilled one apart.
      RECONCILE_REPLY_MAX_AGE_SECONDS: "86400",
      JOB_BACKOFF_BASE_MS: "50",
      DISPATCHER_INTERVAL_MS: "300",
    }),
  });

  let count = 0;
  const connect = async (admin: Awaited<ReturnType<typeof createTenant>>["admin"], provider = "yelp") => {
    // A Thumbtack businessID is digits; a Yelp business id letters, digits and '_'.
    const business =
      provider === "thumbtack"
        ? `7000000${String(++count).padStart(11, "0")}`
        : `bizBackfill_${String(++count).padStart(6, "0")}`;
    const created = await admin.post("/admin/connections", {
      provider,
      externalAccountId: business,
      displayName: "Backfilled",
      inboundAuth: provider === "yelp" ? { type: "none" } : { type: "token" },
    });
    expect(created.status).toBe(201);
    const id = created.body.connection.id as string;
    // Pasted credentials (operator): tenant-admins prove them with a provider call.
    const patched = await app.operator.patch(`/admin/connections/${id}`, {
      credentials: { accessToken: `token-${business}` },
    });
    expect(patched.status).toBe(200);
    return { id, business };
  };

  it("a dry run counts, the real run ingests with source backfill, an overlapping run is refused", async () => {
    const tenant = await createTenant(app.url);
    const c = await connect(tenant.admin);
    // Newest first: two in the window (one of them already delivered by webhook), one before it.
    const [inside, delivered, before] = [
      yelpLead("leadBfIn", 2 * 60),
      yelpLead("leadBfKnown", 3 * 60),
      yelpLead("leadBfOld", 48 * 60),
    ];
    yelp.leads.set(c.business, [inside, delivered, before]);
    expect(
      (await post(`${app.url}/webhooks/yelp/${YELP_TOKEN}`, yelpWebhook(c.business, delivered))).status,
    ).toBe(202);
    const window = { from: hoursAgo(24), to: hoursAgo(1) };

    const dry = await tenant.admin.post(`/admin/connections/${c.id}/backfill`, { ...window, dryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.body).toEqual({ matched: 2 });
    const { rows: afterDry } = await app.sql.query("SELECT source FROM receipts WHERE connection_id = $1", [
      c.id,
    ]);
    expect(afterDry).toEqual([{ source: "webhook" }]);
    const { rows: noBackfill } = await app.sql.query("SELECT 1 FROM backfills WHERE connection_id = $1", [
      c.id,
    ]);
    expect(noBackfill).toHaveLength(0);

    const started = await tenant.admin.post(`/admin/connections/${c.id}/backfill`, window);
    expect(started.status).toBe(202);
    expect(started.body).toEqual({ id: expect.any(String), matched: 2 });
    const id = started.body.id as string;
    expect((await tenant.admin.get(`/admin/backfills/${id}`)).body).toEqual({
      id,
      connectionId: c.id,
      status: "running",
      matched: 2,
      ingested: 0,
      duplicates: 0,
    });

    // Another backfill of the same connection while this one runs, however its window lies.
    const again = await tenant.admin.post(`/admin/connections/${c.id}/backfill`, {
      from: hoursAgo(20),
      to: hoursAgo(2),
    });
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("backfill_in_progress");
    // Concurrent starts: the unique index lets exactly one of them through.
    const other = await connect(tenant.admin);
    yelp.leads.set(other.business, []);
    const racing = await Promise.all(
      Array.from({ length: 5 }, () => tenant.admin.post(`/admin/connections/${other.id}/backfill`, window)),
    );
    expect(racing.map((answer) => answer.status).sort()).toEqual([202, 409, 409, 409, 409]);

    const audit = await tenant.admin.get("/admin/audit");
    expect(
      audit.body.items.filter((entry: { action: string }) => entry.action === "connection.backfill"),
    ).toHaveLength(2);

    // A worker runs it: the missing lead is stored (receipt source backfill), the known one counted.
    await app.startWorker();
    const done = await waitFor(
      () => tenant.admin.get(`/admin/backfills/${id}`),
      (answer) => answer.body.status !== "running",
      30_000,
    );
    expect(done.body).toEqual({
      id,
      connectionId: c.id,
      status: "done",
      matched: 2,
      ingested: 1,
      duplicates: 1,
    });
    const { rows } = await app.sql.query<{ lead_id: string; source: string }>(
      "SELECT lead_id, source FROM receipts WHERE connection_id = $1 ORDER BY lead_id",
      [c.id],
    );
    expect(rows).toEqual([
      { lead_id: "leadBfIn", source: "backfill" },
      { lead_id: "leadBfKnown", source: "webhook" },
    ]);
    await waitFor(
      () =>
        app.sql
          .query("SELECT 1 FROM leads WHERE connection_id = $1", [c.id])
          .then((result) => result.rowCount),
      (n) => n === 2,
    );
    // Only the webhook's lead awaits a first response (speed to lead): never a backfilled one.
    const { rows: awaiting } = await app.sql.query(
      "SELECT external_lead_id, awaits_response FROM leads WHERE connection_id = $1 ORDER BY external_lead_id",
      [c.id],
    );
    expect(awaiting).toEqual([
      { external_lead_id: "leadBfIn", awaits_response: false },
      { external_lead_id: "leadBfKnown", awaits_response: true },
    ]);
    // A backfilled lead's late webhook is a duplicate.
    const late = await post(`${app.url}/webhooks/yelp/${YELP_TOKEN}`, yelpWebhook(c.business, inside));
    expect(late.status).toBe(200);

    // Once done, the connection may be backfilled again.
    const next = await tenant.admin.post(`/admin/connections/${c.id}/backfill`, window);
    expect(next.status).toBe(202);
  });

  describe("refusals", () => {
    it.each([
      ["from missing", { to: hoursAgo(1) }, "from"],
      ["to missing", { from: hoursAgo(2) }, "to"],
      ["from not a date", { from: "yesterday", to: hoursAgo(1) }, "from"],
      ["to a number", { from: hoursAgo(2), to: 1_700_000_000 }, "to"],
      ["from after to", { from: hoursAgo(1), to: hoursAgo(2) }, "to"],
      ["from equal to to", { from: hoursAgo(1), to: hoursAgo(1) }, "to"],
      ["a window over BACKFILL_MAX_DAYS", { from: hoursAgo(31 * 24), to: hoursAgo(1) }, "to"],
      ["dryRun not a boolean", { from: hoursAgo(2), to: hoursAgo(1), dryRun: "yes" }, "dryRun"],
      ["an unknown field", { from: hoursAgo(2), to: hoursAgo(1), limit: 5 }, "limit"],
    ])("%s: 400 validation_failed naming the field", async (_name, body, field) => {
      const tenant = await createTenant(app.url);
      const c = await connect(tenant.admin);
      const answer = await tenant.admin.post(`/admin/connections/${c.id}/backfill`, body);
      expect(answer.status).toBe(400);
      expect(answer.body.error).toBe("validation_failed");
      expect(Object.keys(answer.body.details)).toContain(field);
    });

    const window = () => ({ from: hoursAgo(5), to: hoursAgo(1) });

    it("an unknown connection, or another tenant's, is 404; so is another tenant's backfill", async () => {
      const mine = await createTenant(app.url);
      const theirs = await createTenant(app.url);
      const theirConnection = await connect(theirs.admin);
      yelp.leads.set(theirConnection.business, []);
      const unknown = await mine.admin.post(
        "/admin/connections/00000000-0000-4000-8000-000000000000/backfill",
        window(),
      );
      expect(unknown.status).toBe(404);
      const foreign = await mine.admin.post(`/admin/connections/${theirConnection.id}/backfill`, window());
      expect(foreign.status).toBe(404);
      const started = await theirs.admin.post(`/admin/connections/${theirConnection.id}/backfill`, window());
      expect(started.status).toBe(202);
      expect((await mine.admin.get(`/admin/backfills/${started.body.id}`)).status).toBe(404);
      expect((await theirs.admin.get(`/admin/backfills/${started.body.id}`)).status).toBe(200);
      expect((await app.operator.get(`/admin/backfills/${started.body.id}`)).status).toBe(200);
      expect((await mine.admin.get("/admin/backfills/00000000-0000-4000-8000-000000000000")).status).toBe(
        404,
      );
      expect((await mine.admin.get("/admin/backfills/not-an-id")).status).toBe(404);
    });

    it("a disabled connection: 409 connection_disabled", async () => {
      const tenant = await createTenant(app.url);
      const c = await connect(tenant.admin);
      expect((await tenant.admin.delete(`/admin/connections/${c.id}`)).status).toBe(204);
      const answer = await tenant.admin.post(`/admin/connections/${c.id}/backfill`, window());
      expect(answer.status).toBe(409);
      expect(answer.body.error).toBe("connection_disabled");
    });

    it("Static Forms (no API), a connection without credentials, a Thumbtack list answering 404: 422 backfill_not_available", async () => {
      const tenant = await createTenant(app.url);
      const forms = await tenant.admin.post("/admin/connections", {
        provider: "staticforms",
        externalAccountId: "form-backfill",
        displayName: "Form",
        inboundAuth: { type: "token" },
      });
      const noToken = await tenant.admin.post("/admin/connections", {
        provider: "yelp",
        externalAccountId: "bizBackfillNoToken",
        displayName: "No token",
        inboundAuth: { type: "none" },
      });
      const tt = await connect(tenant.admin, "thumbtack");
      for (const id of [forms.body.connection.id, noToken.body.connection.id, tt.id]) {
        const answer = await tenant.admin.post(`/admin/connections/${id}/backfill`, {
          ...window(),
          dryRun: true,
        });
        expect(answer.status).toBe(422);
        expect(answer.body.error).toBe("backfill_not_available");
      }
      const { rows } = await app.sql.query("SELECT 1 FROM backfills WHERE tenant_id = $1", [tenant.tenantId]);
      expect(rows).toHaveLength(0);
    });

    it("the provider failing to list: 502 provider_error, nothing recorded", async () => {
      const tenant = await createTenant(app.url);
      const c = await connect(tenant.admin);
      yelp.failing.add(c.business);
      const answer = await tenant.admin.post(`/admin/connections/${c.id}/backfill`, window());
      expect(answer.status).toBe(502);
      expect(answer.body.error).toBe("provider_error");
      const { rows } = await app.sql.query("SELECT 1 FROM backfills WHERE connection_id = $1", [c.id]);
      expect(rows).toHaveLength(0);
    });
  });
});
