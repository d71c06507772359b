// Reconciliation against stateful fake Yelp and Thumbtack APIs on
// loopback: leads the webhooks missed enter the ingest path with the webhooks' own keys, a late
// webhook is a duplicate, old leads get no auto-response, and the runs are spread and bounded.
import { Reconciliation } from "../../src/reconciliation/reconciliation.service.js";
import { ReconciliationSweep } from "../../src/reconciliation/reconciliation-sweep.js";
import { OPERATOR_KEY } from "../support/admin.js";
import {
  thumbtackNegotiation,
  useFakeThumbtack,
  useFakeYelp,
  yelpLead,
  yelpWebhook,
} from "../support/fake-provider-leads.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import { waitFor } from "../support/wait.js";

const YELP_TOKEN = "yelp-platform-token-0123456789";

describe("reconciliation", () => {
  const yelp = useFakeYelp();
  const thumbtack = useFakeThumbtack();
  const crm = useFakeServer({ status: 200, body: {} });
  const app = useApp({
    worker: true,
    env: () => ({
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      YELP_WEBHOOK_TOKEN: YELP_TOKEN,
      YELP_API_BASE_URL: yelp.url,
      THUMBTACK_API_BASE_URL: thumbtack.url,
      JOB_BACKOFF_BASE_MS: "50",
      DISPATCHER_INTERVAL_MS: "300",
    }),
  });

  let businesses = 0;
  /** A connection made a day ago (reconciliation never looks before a connection was made). */
  const connect = async (provider: "yelp" | "thumbtack", settings: Record<string, unknown> = {}) => {
    const business = `bizRecon_${provider}_${String(++businesses).padStart(6, "0")}`;
    const created = await app.createConnection({
      provider,
      externalAccountId: business,
      inboundAuth: provider === "yelp" ? { type: "none" } : { type: "basic" },
      credentials: { accessToken: `token-${business}` },
      settings,
    });
    await app.sql.query("UPDATE connections SET created_at = now() - interval '1 day' WHERE id = $1", [
      created.connectionId,
    ]);
    return { ...created, business };
  };
  const jobsOf = (tenantId: string) =>
    app.sql
      .query<{ operation: string; status: string }>(
        "SELECT operation, status FROM jobs WHERE tenant_id = $1 ORDER BY created_at",
        [tenantId],
      )
      .then((result) => result.rows);
  const allDone = (tenantId: string, count: number) =>
    waitFor(
      () => jobsOf(tenantId),
      (rows) => rows.length === count && rows.every((row) => ["succeeded", "dead"].includes(row.status)),
      30_000,
    );
  const connectionView = async (connectionId: string) => {
    const answer = await app.operator.get(`/admin/connections/${connectionId}`);
    expect(answer.status).toBe(200);
    return answer.body as { reconciliation: Record<string, unknown> };
  };

  it("Yelp: 3 listed leads, 1 webhook; one tick stores the other 2 with source reconcile, their late webhooks are duplicates", async () => {
    const c = await connect("yelp", {
      autoResponse: { enabled: true, text: "Thanks, we will call you shortly." },
      crmDestination: { url: `${crm.url}/crm/yelp-reconcile` },
    });
    const crmPath = "/crm/yelp-reconcile";
    const [fresh, recent, old] = [yelpLead("leadRcA", 20), yelpLead("leadRcB", 10), yelpLead("leadRcC", 120)];
    yelp.leads.set(c.business, [recent, fresh, old]);

    // Only one of the three leads reaches Leadgate by webhook.
    expect(
      (await post(`${app.url}/webhooks/yelp/${YELP_TOKEN}`, yelpWebhook(c.business, fresh))).status,
    ).toBe(202);
    await allDone(c.tenantId, 3); // lead-upsert, initial-response, crm-delivery

    // One tick of the schedule: the first sweep notes the connection's tick, the next interval's runs it.
    const sweep = app.worker.get(ReconciliationSweep);
    const now = Date.now();
    await sweep.sweep(new Date(now));
    const interval = app.config.reconcileIntervalSeconds * 1000;
    expect(await sweep.sweep(new Date(now + interval))).toBeGreaterThanOrEqual(1);
    // 1 reconciliation + 2 × (lead-upsert, crm-delivery) + 1 initial-response (the recent lead only).
    await allDone(c.tenantId, 3 + 1 + 5);

    const { rows: leads } = await app.sql.query<{ external_lead_id: string }>(
      "SELECT external_lead_id FROM leads WHERE tenant_id = $1 ORDER BY external_lead_id",
      [c.tenantId],
    );
    expect(leads.map((lead) => lead.external_lead_id)).toEqual(["leadRcA", "leadRcB", "leadRcC"]);
    const { rows: receipts } = await app.sql.query<{ lead_id: string; source: string; event_id: string }>(
      "SELECT lead_id, source, event_id FROM receipts WHERE tenant_id = $1 ORDER BY lead_id",
      [c.tenantId],
    );
    expect(receipts).toEqual([
      { lead_id: "leadRcA", source: "webhook", event_id: "leadRcA_ev1" },
      { lead_id: "leadRcB", source: "reconcile", event_id: "leadRcB_ev1" },
      { lead_id: "leadRcC", source: "reconcile", event_id: "leadRcC_ev1" },
    ]);
    // The admin view shows the source.
    const listed = await app.operator.get(`/admin/receipts?connectionId=${c.connectionId}`);
    expect(listed.body.items.map((item: { source: string }) => item.source).sort()).toEqual([
      "reconcile",
      "reconcile",
      "webhook",
    ]);

    // Auto-response: the webhook's lead and the recent missed one; the lead 2 h old gets none.
    expect(yelp.repliesTo("leadRcA")).toHaveLength(1);
    expect(yelp.repliesTo("leadRcB")).toHaveLength(1);
    expect(yelp.repliesTo("leadRcC")).toHaveLength(0);
    const crmCount = () => crm.received.filter((request) => request.path === crmPath).length;
    expect(crmCount()).toBe(3);

    expect((await connectionView(c.connectionId)).reconciliation).toMatchObject({
      status: "active",
      leadsFound: 3,
      missedByWebhooks: 2,
      lastError: null,
    });
    expect((await connectionView(c.connectionId)).reconciliation.lastRunAt).not.toBeNull();
    // The missed leads open a webhooks.missing alert for the connection (the agency's signal).
    const missingAlerts = () =>
      app.operator
        .get(`/admin/alerts?type=webhooks.missing&connectionId=${c.connectionId}`)
        .then((answer) => answer.body.items as { status: string; count: number; summary: string }[]);
    const [missing] = await missingAlerts();
    expect(missing).toMatchObject({ status: "open", count: 1 });
    expect(missing!.summary).toContain("2 lead(s)");

    // The two late webhooks: duplicates, no new jobs, no second CRM delivery, no payload conflict.
    for (const lead of [recent, old]) {
      const late = await post(`${app.url}/webhooks/yelp/${YELP_TOKEN}`, yelpWebhook(c.business, lead));
      expect(late.status).toBe(200);
      expect(late.body).toMatchObject({ duplicate: true });
    }
    await app.settled();
    expect(await jobsOf(c.tenantId)).toHaveLength(9);
    expect(crmCount()).toBe(3);
    expect(yelp.repliesTo("leadRcC")).toHaveLength(0);
    const { rows: conflicts } = await app.sql.query("SELECT 1 FROM payload_conflicts WHERE tenant_id = $1", [
      c.tenantId,
    ]);
    expect(conflicts).toHaveLength(0);
    const metrics = await fetch(`${app.url}/metrics`).then((response) => response.text());
    expect(metrics).toContain("leadgate_reconcile_missed_leads_total");

    // A second run finds nothing new: no provider call for known leads beyond the list, nothing missed.
    const eventsCallsBefore = yelp.received.filter((request) => request.path.includes("/events")).length;
    expect(await app.api.app.get(Reconciliation).startNow(c.tenantId, c.connectionId)).toBe(true);
    await allDone(c.tenantId, 10);
    expect(yelp.received.filter((request) => request.path.includes("/events")).length).toBe(
      eventsCallsBefore,
    );
    expect((await connectionView(c.connectionId)).reconciliation).toMatchObject({
      leadsFound: 3,
      missedByWebhooks: 0,
    });
    // A run that found none missing resolves the alert.
    expect((await missingAlerts()).map((alert) => alert.status)).toEqual(["resolved"]);
  });

  it("a lead younger than the grace period is left to its webhook", async () => {
    const c = await connect("yelp");
    yelp.leads.set(c.business, [yelpLead("leadRcYoung", 1)]);
    await app.api.app.get(Reconciliation).startNow(c.tenantId, c.connectionId);
    await allDone(c.tenantId, 1);
    const { rows } = await app.sql.query("SELECT 1 FROM receipts WHERE tenant_id = $1", [c.tenantId]);
    expect(rows).toHaveLength(0);
    expect((await connectionView(c.connectionId)).reconciliation).toMatchObject({ missedByWebhooks: 0 });
    // Its webhook then arrives as new.
    const delivered = await post(
      `${app.url}/webhooks/yelp/${YELP_TOKEN}`,
      yelpWebhook(c.business, yelp.leads.get(c.business)![0]!),
    );
    expect(delivered.status).toBe(202);
  });

  it("Thumbtack: the negotiations endpoint answering 404 makes reconciliation manual", async () => {
    const c = await connect("thumbtack");
    await app.api.app.get(Reconciliation).startNow(c.tenantId, c.connectionId);
    await allDone(c.tenantId, 1);
    expect((await jobsOf(c.tenantId))[0]).toMatchObject({ operation: "reconciliation", status: "succeeded" });
    expect((await connectionView(c.connectionId)).reconciliation).toMatchObject({
      status: "manual",
      lastError: "negotiations_endpoint_not_found",
    });
    expect(
      thumbtack.received.some((request) =>
        request.path.startsWith(`/api/v4/businesses/${c.business}/negotiations`),
      ),
    ).toBe(true);
  });

  it("Thumbtack: a negotiation the webhook missed is stored with the webhook's key; its late webhook is a duplicate", async () => {
    const c = await connect("thumbtack");
    const delivered = thumbtackNegotiation("800000000000000001", c.business, 30);
    const missed = thumbtackNegotiation("800000000000000002", c.business, 15);
    thumbtack.negotiations.set(c.business, [missed, delivered]);
    const webhook = (data: Record<string, unknown>) => ({
      event: { eventType: "NegotiationCreatedV4", webhookID: "1", triggeredAt: new Date().toISOString() },
      data,
    });
    const auth = {
      authorization: `Basic ${Buffer.from(`${c.secrets.username}:${c.secrets.password}`).toString("base64")}`,
    };
    expect(
      (await post(`${app.url}/webhooks/thumbtack/${c.connectionId}`, webhook(delivered), auth)).status,
    ).toBe(202);
    await allDone(c.tenantId, 1);
    await app.api.app.get(Reconciliation).startNow(c.tenantId, c.connectionId);
    await allDone(c.tenantId, 3);
    const { rows } = await app.sql.query<{ lead_id: string; source: string }>(
      "SELECT lead_id, source FROM receipts WHERE tenant_id = $1 ORDER BY lead_id",
      [c.tenantId],
    );
    expect(rows).toEqual([
      { lead_id: "800000000000000001", source: "webhook" },
      { lead_id: "800000000000000002", source: "reconcile" },
    ]);
    const late = await post(`${app.url}/webhooks/thumbtack/${c.connectionId}`, webhook(missed), auth);
    expect(late.status).toBe(200);
    expect(late.body).toMatchObject({ duplicate: true });
    await app.settled();
    expect(await jobsOf(c.tenantId)).toHaveLength(3);
    expect((await connectionView(c.connectionId)).reconciliation).toMatchObject({
      status: "active",
      leadsFound: 2,
      missedByWebhooks: 1,
    });
  });

  it("Static Forms has no API: its reconciliation is manual", async () => {
    const created = await app.createConnection({ provider: "staticforms", inboundAuth: { type: "token" } });
    expect((await connectionView(created.connectionId)).reconciliation).toMatchObject({
      status: "manual",
      lastRunAt: null,
    });
  });

  it("a Yelp connection without a token: its run records manual and calls nothing; the connection stays active", async () => {
    const created = await app.createConnection({
      provider: "yelp",
      externalAccountId: "bizReconNoToken",
      inboundAuth: { type: "none" },
    });
    await app.api.app.get(Reconciliation).startNow(created.tenantId, created.connectionId);
    await allDone(created.tenantId, 1);
    const view = await app.operator.get(`/admin/connections/${created.connectionId}`);
    expect(view.body).toMatchObject({ status: "active", reconciliation: { status: "manual" } });
    const { rows } = await app.sql.query("SELECT reconcile_last_error FROM connections WHERE id = $1", [
      created.connectionId,
    ]);
    expect(rows).toEqual([{ reconcile_last_error: "no_credentials" }]);
    expect(yelp.listCalls("bizReconNoToken")).toHaveLength(0);
  });

  it("a run whose provider list fails records error with the code, and retries", async () => {
    const c = await connect("yelp");
    yelp.failing.add(c.business);
    await app.api.app.get(Reconciliation).startNow(c.tenantId, c.connectionId);
    await waitFor(
      () => connectionView(c.connectionId),
      (view) => view.reconciliation.status === "error",
    );
    expect((await connectionView(c.connectionId)).reconciliation).toMatchObject({ lastError: "http_500" });
    // The provider recovers: the job's retry succeeds and the status is active again.
    yelp.failing.delete(c.business);
    yelp.leads.set(c.business, []);
    await allDone(c.tenantId, 1);
    expect((await jobsOf(c.tenantId))[0]).toMatchObject({ status: "succeeded" });
    expect((await connectionView(c.connectionId)).reconciliation).toMatchObject({
      status: "active",
      lastError: null,
    });
  });

  it("start-now of an unknown or another tenant's connection is 404", async () => {
    const mine = await connect("yelp");
    const other = await connect("yelp");
    await expect(
      app.api.app.get(Reconciliation).startNow(mine.tenantId, other.connectionId),
    ).rejects.toMatchObject({ status: 404 });
  });
});
