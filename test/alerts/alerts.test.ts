// Alerts end to end: the real API and worker, a CRM, a Slack incoming webhook and a webhook
// receiver as real HTTP servers. Dead jobs of one group make one alert and one message per channel;
// a bulk replay that succeeds resolves it, with one resolve message per channel.
import { Webhook } from "standardwebhooks";
import { AlertBook } from "../../src/alerts/alert-book.js";
import { createTenant, OPERATOR_KEY, staticFormsDelivery } from "../support/admin.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import { waitFor } from "../support/wait.js";

const PUBLIC_BASE_URL = "https://leadgate.agency.example";

/** A probe of what the fake servers received so far, for waitFor. */
const counted =
  <T>(read: () => T) =>
  () =>
    Promise.resolve(read());

describe("alerts and notification channels", () => {
  /** Status the fake CRM answers, per path (default 200). */
  const answers = new Map<string, number>();
  const crm = useFakeServer({ status: 200, body: {} }, (request) => ({
    status: answers.get(request.path) ?? 200,
  }));
  const slack = useFakeServer({ status: 200, text: "ok" });
  const receiver = useFakeServer({ status: 204 });
  const app = useApp({
    worker: true,
    env: {
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      JOB_BACKOFF_BASE_MS: "50",
      DISPATCHER_INTERVAL_MS: "300",
      REPLAY_RATE_PER_SECOND: "1000",
      PUBLIC_BASE_URL,
    },
  });

  const slackTo = (path: string) => slack.received.filter((request) => request.path === path);
  const receivedAt = (path: string) => receiver.received.filter((request) => request.path === path);

  const connect = async (admin: Awaited<ReturnType<typeof createTenant>>["admin"], crmPath: string) => {
    const created = await admin.post("/admin/connections", {
      provider: "staticforms",
      externalAccountId: `form-${crmPath.slice(1)}`,
      displayName: `Form ${crmPath.slice(1)}`,
      inboundAuth: { type: "bearer" },
      settings: { crmDestination: { url: `${crm.url}${crmPath}` } },
    });
    expect(created.status).toBe(201);
    const id = created.body.connection.id as string;
    const token = created.body.secrets.bearerToken as string;
    return {
      id,
      deliver: () =>
        post(`${app.url}/webhooks/staticforms/${id}`, staticFormsDelivery(), {
          authorization: `Bearer ${token}`,
        }),
    };
  };
  const crmJobs = async (connectionId: string) =>
    (
      await app.sql.query<{ status: string }>(
        "SELECT status FROM jobs WHERE connection_id = $1 AND operation = 'crm-delivery'",
        [connectionId],
      )
    ).rows;
  const alertsOf = async (connectionId: string) =>
    (
      await app.sql.query<{ id: string; type: string; status: string; count: number }>(
        "SELECT id, type, status, count FROM alerts WHERE connection_id = $1 ORDER BY first_seen_at",
        [connectionId],
      )
    ).rows;

  it("11 deliveries the CRM refuses: one job.dead alert (count 11), one message per channel; a bulk replay that succeeds resolves it", async () => {
    const tenant = await createTenant(app.url);
    const slackChannel = await tenant.admin.post("/admin/notification-channels", {
      type: "slack",
      url: `${slack.url}/services/T1/B1/one`,
    });
    expect(slackChannel.status).toBe(201);
    expect(slackChannel.body.secrets).toBeUndefined();
    const webhookChannel = await tenant.admin.post("/admin/notification-channels", {
      type: "webhook",
      url: `${receiver.url}/one`,
    });
    expect(webhookChannel.status).toBe(201);
    const signingSecret = webhookChannel.body.secrets.signingSecret as string;
    expect(signingSecret).toMatch(/^whsec_/);
    // A Slack URL is a secret: never shown again, never stored in clear.
    const listed = await tenant.admin.get("/admin/notification-channels");
    expect(listed.text).not.toContain("/services/T1/B1/one");
    expect(listed.text).not.toContain(signingSecret);
    const stored = await app.sql.query<{ row: string }>(
      "SELECT row_to_json(c)::text AS row FROM notification_channels c",
    );
    expect(stored.rows.map((r) => r.row).join()).not.toContain("/services/T1/B1/one");

    answers.set("/crm-one", 400);
    const connection = await connect(tenant.admin, "/crm-one");
    for (let n = 0; n < 11; n++) expect((await connection.deliver()).status).toBe(202);
    await waitFor(
      () => crmJobs(connection.id),
      (jobs) => jobs.length === 11 && jobs.every((job) => job.status === "dead"),
    );
    const [alert] = await alertsOf(connection.id);
    expect(alert).toMatchObject({ type: "job.dead", status: "open", count: 11 });
    await waitFor(
      counted(() => [slackTo("/services/T1/B1/one").length, receivedAt("/one").length]),
      ([slacks, webhooks]) => slacks === 1 && webhooks === 1,
    );
    await app.settled();
    expect(slackTo("/services/T1/B1/one")).toHaveLength(1);
    const opened = JSON.parse(slackTo("/services/T1/B1/one")[0]!.body) as { text: string };
    expect(opened.text).toContain("job.dead");
    expect(opened.text).toContain("crm-delivery");
    expect(opened.text).toContain("Form crm-one");
    expect(opened.text).toContain(`${PUBLIC_BASE_URL}/admin/alerts/${alert!.id}`);

    // The webhook channel's message is signed with its own secret; webhook-id is the job key.
    const [delivery] = receivedAt("/one");
    const payload = new Webhook(signingSecret).verify(delivery!.body, {
      "webhook-id": String(delivery!.headers["webhook-id"]),
      "webhook-timestamp": String(delivery!.headers["webhook-timestamp"]),
      "webhook-signature": String(delivery!.headers["webhook-signature"]),
    }) as { type: string; data: { alert: { id: string; type: string } } };
    expect(payload.type).toBe("alert.opened");
    expect(payload.data.alert).toMatchObject({ id: alert!.id, type: "job.dead" });
    expect(delivery!.headers["webhook-id"]).toBe(
      `notification:${alert!.id}.${webhookChannel.body.channel.id}.opened`,
    );

    const view = await tenant.admin.get(`/admin/alerts/${alert!.id}`);
    expect(view.status).toBe(200);
    expect(view.body).toMatchObject({
      id: alert!.id,
      type: "job.dead",
      status: "open",
      connectionId: connection.id,
      operation: "crm-delivery",
      errorCode: "http_400",
      count: 11,
      resolvedAt: null,
    });
    expect(new Date(view.body.lastSeenAt).getTime()).toBeGreaterThanOrEqual(
      new Date(view.body.firstSeenAt).getTime(),
    );

    answers.set("/crm-one", 200);
    const replay = await tenant.admin.post("/admin/replays", {
      filter: { status: "dead", connectionId: connection.id },
    });
    expect(replay.status).toBe(202);
    await waitFor(
      () => crmJobs(connection.id),
      (jobs) => jobs.every((job) => job.status === "succeeded"),
    );
    await waitFor(
      () => alertsOf(connection.id),
      ([only]) => only?.status === "resolved",
    );
    await waitFor(
      counted(() => [slackTo("/services/T1/B1/one").length, receivedAt("/one").length]),
      ([slacks, webhooks]) => slacks === 2 && webhooks === 2,
    );
    await app.settled();
    expect(slackTo("/services/T1/B1/one")).toHaveLength(2);
    expect(JSON.parse(slackTo("/services/T1/B1/one")[1]!.body).text).toContain("Resolved: job.dead");
    expect(await alertsOf(connection.id)).toHaveLength(1);
    const resolved = await tenant.admin.get(`/admin/alerts?status=resolved&connectionId=${connection.id}`);
    expect(resolved.body.items.map((a: { id: string }) => a.id)).toEqual([alert!.id]);
    expect(resolved.body.items[0].resolvedAt).not.toBeNull();

    // Another error code: another group, so a new alert (not the resolved one re-opened).
    answers.set("/crm-one", 422);
    expect((await connection.deliver()).status).toBe(202);
    await waitFor(
      () => alertsOf(connection.id),
      (rows) => rows.length === 2,
    );
    const rows = await alertsOf(connection.id);
    expect(rows.map((row) => [row.status, row.count])).toEqual([
      ["resolved", 11],
      ["open", 1],
    ]);
  });

  it("tenant B cannot list, read, acknowledge, resolve or be notified of tenant A's alerts", async () => {
    const a = await createTenant(app.url);
    const b = await createTenant(app.url);
    const bChannel = await b.admin.post("/admin/notification-channels", {
      type: "webhook",
      url: `${receiver.url}/tenant-b`,
    });
    expect(bChannel.status).toBe(201);
    const aChannel = await a.admin.post("/admin/notification-channels", {
      type: "webhook",
      url: `${receiver.url}/tenant-a`,
    });
    answers.set("/crm-a", 400);
    const connection = await connect(a.admin, "/crm-a");
    expect((await connection.deliver()).status).toBe(202);
    const [alert] = await waitFor(
      () => alertsOf(connection.id),
      (rows) => rows.length === 1,
    );
    await waitFor(
      counted(() => receivedAt("/tenant-a").length),
      (n) => n === 1,
    );
    await app.settled();
    expect(receivedAt("/tenant-b")).toHaveLength(0);

    expect((await b.admin.get("/admin/alerts")).body.items).toEqual([]);
    expect((await b.admin.get(`/admin/alerts?connectionId=${connection.id}`)).body.items).toEqual([]);
    for (const answer of [
      await b.admin.get(`/admin/alerts/${alert!.id}`),
      await b.admin.post(`/admin/alerts/${alert!.id}/acknowledge`),
      await b.admin.post(`/admin/alerts/${alert!.id}/resolve`),
      await b.admin.post(`/admin/notification-channels/${aChannel.body.channel.id}/test`),
      await b.admin.delete(`/admin/notification-channels/${aChannel.body.channel.id}`),
    ]) {
      expect([answer.status, answer.body.error]).toEqual([404, "not_found"]);
    }
    expect(
      (await b.admin.get("/admin/notification-channels")).body.items.map((c: { id: string }) => c.id),
    ).toEqual([bChannel.body.channel.id]);
    expect((await a.admin.get(`/admin/alerts/${alert!.id}`)).body.status).toBe("open");

    // Tenant A acknowledges, then resolves by hand: each audited; the resolution is notified once.
    const acknowledged = await a.admin.post(`/admin/alerts/${alert!.id}/acknowledge`);
    expect([acknowledged.status, acknowledged.body.alert.status]).toEqual([200, "acknowledged"]);
    expect(acknowledged.body.alert.acknowledgedAt).not.toBeNull();
    const resolved = await a.admin.post(`/admin/alerts/${alert!.id}/resolve`);
    expect([resolved.status, resolved.body.alert.status]).toEqual([200, "resolved"]);
    const again = await a.admin.post(`/admin/alerts/${alert!.id}/acknowledge`);
    expect([again.status, again.body.alert.status]).toEqual([200, "resolved"]);
    const audit = await app.sql.query<{ action: string; api_key_id: string }>(
      "SELECT action, api_key_id FROM audit_entries WHERE target_id = $1 ORDER BY created_at",
      [alert!.id],
    );
    expect(audit.rows).toEqual([
      { action: "alert.acknowledge", api_key_id: a.keyId },
      { action: "alert.resolve", api_key_id: a.keyId },
    ]);
    await waitFor(
      counted(() => receivedAt("/tenant-a").length),
      (n) => n === 2,
    );
    await app.settled();
    expect(receivedAt("/tenant-a").map((r) => (JSON.parse(r.body) as { type: string }).type)).toEqual([
      "alert.opened",
      "alert.resolved",
    ]);
    expect(receivedAt("/tenant-b")).toHaveLength(0);
  });

  it("a platform channel receives every tenant's alerts; `types` filters what a channel receives", async () => {
    const platform = await app.operator.post("/admin/notification-channels", {
      type: "webhook",
      url: `${receiver.url}/platform`,
    });
    expect([platform.status, platform.body.channel.tenantId]).toEqual([201, null]);
    const tenant = await createTenant(app.url);
    const silentOnly = await tenant.admin.post("/admin/notification-channels", {
      type: "webhook",
      url: `${receiver.url}/silent-only`,
      types: ["connection.silent"],
    });
    expect(silentOnly.body.channel.types).toEqual(["connection.silent"]);
    // A tenant never sees the platform's channels; the operator sees them all.
    expect(
      (await tenant.admin.get("/admin/notification-channels")).body.items.map((c: { id: string }) => c.id),
    ).toEqual([silentOnly.body.channel.id]);
    const all = await app.operator.get("/admin/notification-channels?limit=200");
    expect(all.body.items.map((c: { id: string }) => c.id)).toEqual(
      expect.arrayContaining([platform.body.channel.id, silentOnly.body.channel.id]),
    );

    answers.set("/crm-platform", 400);
    const connection = await connect(tenant.admin, "/crm-platform");
    expect((await connection.deliver()).status).toBe(202);
    const [alert] = await waitFor(
      () => alertsOf(connection.id),
      (rows) => rows.length === 1,
    );
    await waitFor(
      counted(() => receivedAt("/platform").filter((r) => r.body.includes(alert!.id)).length),
      (n) => n === 1,
    );
    await app.settled();
    expect(receivedAt("/silent-only")).toHaveLength(0);
    expect(
      (await tenant.admin.delete(`/admin/notification-channels/${platform.body.channel.id}`)).status,
    ).toBe(404);
    expect(
      (await app.operator.delete(`/admin/notification-channels/${platform.body.channel.id}`)).status,
    ).toBe(204);
    expect(
      (await app.operator.delete(`/admin/notification-channels/${platform.body.channel.id}`)).status,
    ).toBe(404);
  });

  it("AlertBook (the seam for registration.error and webhooks.missing): raise opens or counts, clear resolves, a raise within 10 minutes re-opens, later one opens anew", async () => {
    const tenant = await createTenant(app.url);
    const connection = await connect(tenant.admin, "/crm-book");
    const book = app.api.app.get(AlertBook, { strict: false });
    const occurrence = {
      tenantId: tenant.tenantId,
      type: "registration.error" as const,
      connectionId: connection.id,
      operation: "provider-sync",
      errorCode: "http_403",
      summary: "The provider refused the webhook registration.",
    };
    const first = await book.raise(undefined, occurrence);
    expect(await book.raise(undefined, occurrence)).toBe(first);
    const other = await book.raise(undefined, { ...occurrence, errorCode: "http_500" });
    expect(other).not.toBe(first);
    const view = await tenant.admin.get(`/admin/alerts/${first}`);
    expect(view.body).toMatchObject({
      type: "registration.error",
      count: 2,
      status: "open",
      errorCode: "http_403",
    });
    expect(
      await book.clear(undefined, {
        tenantId: tenant.tenantId,
        type: "registration.error",
        connectionId: connection.id,
        errorCode: "http_403",
      }),
    ).toBe(1);
    expect((await tenant.admin.get(`/admin/alerts/${first}`)).body.status).toBe("resolved");
    expect((await tenant.admin.get(`/admin/alerts/${other}`)).body.status).toBe("open");
    expect(await book.raise(undefined, occurrence)).toBe(first); // returned within 10 minutes: re-opened
    expect((await tenant.admin.get(`/admin/alerts/${first}`)).body).toMatchObject({
      status: "open",
      count: 3,
      resolvedAt: null,
    });
    await book.clear(undefined, {
      tenantId: tenant.tenantId,
      type: "registration.error",
      errorCode: "http_403",
    });
    await app.sql.query("UPDATE alerts SET resolved_at = now() - interval '11 minutes' WHERE id = $1", [
      first,
    ]);
    const reopened = await book.raise(undefined, occurrence);
    expect(reopened).not.toBe(first);
    // Another tenant's clear touches nothing of this tenant.
    const stranger = await createTenant(app.url);
    expect(await book.clear(undefined, { tenantId: stranger.tenantId, type: "registration.error" })).toBe(0);
    const list = await tenant.admin.get("/admin/alerts?type=registration.error&status=open");
    expect(list.body.items.map((a: { id: string }) => a.id).sort()).toEqual([other, reopened].sort());
    // Pagination: one per page, newest first, then the cursor's page.
    const page = await tenant.admin.get("/admin/alerts?type=registration.error&limit=1");
    expect(page.body.items).toHaveLength(1);
    const next = await tenant.admin.get(
      `/admin/alerts?type=registration.error&limit=1&cursor=${page.body.nextCursor}`,
    );
    expect(next.body.items).toHaveLength(1);
    expect(next.body.items[0].id).not.toBe(page.body.items[0].id);
  });

  it("POST /admin/notification-channels/{id}/test: one test notification, answered with its outcome", async () => {
    const tenant = await createTenant(app.url);
    const channel = await tenant.admin.post("/admin/notification-channels", {
      type: "slack",
      url: `${slack.url}/services/test`,
    });
    const answer = await tenant.admin.post(`/admin/notification-channels/${channel.body.channel.id}/test`);
    expect([answer.status, answer.body]).toEqual([200, { delivered: true }]);
    expect(slackTo("/services/test")).toHaveLength(1);
    expect(JSON.parse(slackTo("/services/test")[0]!.body).text).toContain("test notification");
  });
});
