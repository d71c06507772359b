// Provider webhook registration, end to end: accounts connected through the
// real OAuth flow, a real worker, and stateful fake Thumbtack and Yelp servers on loopback. The
// outcomes asserted are what the fakes hold and received, the rows, and the admin API's answers.
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { fixture } from "../support/fixtures.js";
import {
  connectWithOAuth,
  providerEnv,
  useFakeOAuth,
  useFakeThumbtack,
  useFakeYelp,
} from "../support/fake-providers.js";
import { type TestApp, useApp } from "../support/harness.js";
import { post } from "../support/http.js";
import { waitFor } from "../support/wait.js";
import { RegistrationSweep } from "../../src/connections/registration-sweep.js";
import { TokenRefreshSweep } from "../../src/connections/token-refresh-sweep.js";

const YELP_TOKEN = "yelp-platform-token-0123456789";
const PUBLIC_BASE_URL = "https://leadgate.agency.example";

const basic = (auth: { username: string; password: string }) =>
  `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString("base64")}`;

let businesses = 0;
/** A Thumbtack businessID is digits ("tt"); a Yelp business id letters and digits. */
const newBusiness = (prefix: string) =>
  prefix === "tt"
    ? `7000000${String(++businesses).padStart(11, "0")}`
    : `${prefix}Biz${String(++businesses).padStart(5, "0")}`;

type Tenant = Awaited<ReturnType<typeof createTenant>>;

/** The connection's provider-sync jobs, oldest first. */
const syncJobs = (app: TestApp, connectionId: string) =>
  app.sql
    .query<{ job_key: string; status: string; last_error_code: string | null }>(
      `SELECT job_key, status, last_error_code FROM jobs
       WHERE connection_id = $1 AND operation = 'provider-sync' ORDER BY created_at, job_key`,
      [connectionId],
    )
    .then((result) => result.rows);

/** The connection's reconciliation runs (a sync starts one beside its registration). */
const reconciliationRuns = (app: TestApp, connectionId: string) =>
  app.sql
    .query<{ job_key: string; status: string }>(
      `SELECT job_key, status FROM jobs WHERE connection_id = $1 AND operation = 'reconciliation'`,
      [connectionId],
    )
    .then((result) => result.rows);

/** Waits until every provider-sync job of the connection has finished; answers them. */
const settled = (app: TestApp, connectionId: string) =>
  waitFor(
    () => syncJobs(app, connectionId),
    (jobs) => jobs.length > 0 && jobs.every((job) => ["succeeded", "dead", "cancelled"].includes(job.status)),
  );

/** The fake OAuth server, Thumbtack and Yelp, and an app with a worker that calls them (plus `env`). */
function useProviderSyncApp(env: Record<string, string> = {}) {
  const oauth = useFakeOAuth();
  const thumbtack = useFakeThumbtack(oauth.reaches);
  const yelp = useFakeYelp(oauth.reaches);
  const app = useApp({
    worker: true,
    env: () => ({
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      YELP_WEBHOOK_TOKEN: YELP_TOKEN,
      PUBLIC_BASE_URL,
      ...providerEnv(yelp.server, thumbtack.server),
      ...oauth.env(),
      JOB_BACKOFF_BASE_MS: "50",
      DISPATCHER_INTERVAL_MS: "300",
      ...env,
    }),
  });
  return { oauth, thumbtack, yelp, app };
}

describe("provider registration (subscriptions mode)", () => {
  const { oauth, thumbtack, yelp, app } = useProviderSyncApp();
  let tenant: Tenant;
  beforeAll(async () => {
    tenant = await createTenant(app.url);
  });
  afterEach(() => {
    thumbtack.state.down = false;
    thumbtack.state.forbidden = false;
    yelp.state.down = false;
  });

  const view = async (connectionId: string, admin = tenant.admin) => {
    const answer = await admin.get(`/admin/connections/${connectionId}`);
    expect(answer.status).toBe(200);
    return answer.body as { status: string; registration: Record<string, unknown>; hasCredentials: boolean };
  };
  const deliverThumbtack = (connectionId: string, authorization: string, negotiationId: string) => {
    const body = fixture("thumbtack/negotiation-created-v4.json").json as { data: object };
    return post(
      `${app.url}/webhooks/thumbtack/${connectionId}`,
      { ...body, data: { ...body.data, negotiationID: negotiationId } },
      { authorization },
    );
  };

  describe("Thumbtack", () => {
    it("connect creates one webhook whose credentials authenticate a real delivery; rotate-secret updates the provider's copy, the old credentials last the grace period; disconnect deletes it before the tokens go", async () => {
      const business = newBusiness("tt");
      const connectionId = await connectWithOAuth(app, oauth, tenant, "thumbtack", business);
      await settled(app, connectionId);

      const creations = () =>
        thumbtack.server.received.filter(
          (request) =>
            request.method === "POST" && request.path === `/api/v4/businesses/${business}/webhooks`,
        );
      expect(creations()).toHaveLength(1);
      const [hook] = thumbtack.hooks(business);
      expect(hook).toEqual({
        webhookID: expect.any(String),
        webhookURL: `${PUBLIC_BASE_URL}/webhooks/thumbtack/${connectionId}`,
        eventTypes: ["NegotiationCreatedV4", "MessageCreatedV4"],
        enabled: true,
        auth: { username: expect.stringMatching(/^lg_/), password: expect.any(String) },
      });
      expect((await view(connectionId)).registration).toEqual({
        status: "active",
        providerWebhookId: hook!.webhookID,
        expiresAt: null,
        lastSyncedAt: expect.any(String),
        lastError: null,
      });
      // What Thumbtack was given is what Leadgate accepts.
      const first = hook!.auth!;
      expect((await deliverThumbtack(connectionId, basic(first), "neg-reg-1")).status).toBe(202);

      const rotated = await tenant.admin.post(`/admin/connections/${connectionId}/rotate-secret`, {
        graceSeconds: 3600,
      });
      expect(rotated.status).toBe(200);
      await settled(app, connectionId);
      const updates = thumbtack.server.received.filter(
        (request) => request.method === "PUT" && request.path.endsWith(`/webhooks/${hook!.webhookID}`),
      );
      expect(updates).toHaveLength(1);
      const [updated] = thumbtack.hooks(business);
      expect(updated!.webhookID).toBe(hook!.webhookID);
      expect(updated!.auth).toEqual(rotated.body.secrets);
      expect(updated!.auth).not.toEqual(first);
      expect((await deliverThumbtack(connectionId, basic(updated!.auth!), "neg-reg-2")).status).toBe(202);
      // The old credentials keep working until the grace period ends (here: ended by hand).
      expect((await deliverThumbtack(connectionId, basic(first), "neg-reg-3")).status).toBe(202);
      expect(
        (await tenant.admin.post(`/admin/connections/${connectionId}/revoke-previous-secret`)).status,
      ).toBe(200);
      expect((await deliverThumbtack(connectionId, basic(first), "neg-reg-4")).status).toBe(401);

      // Disconnect: the removal fails at first, and the clean-up keeps the tokens meanwhile.
      thumbtack.state.down = true;
      expect((await tenant.admin.delete(`/admin/connections/${connectionId}`)).status).toBe(204);
      const removal = await waitFor(
        () => syncJobs(app, connectionId),
        (jobs) => jobs.at(-1)!.job_key.includes(":remove:") && jobs.at(-1)!.last_error_code === "http_500",
      );
      expect(removal.at(-1)!.status).not.toBe("succeeded");
      const sweep = app.worker.get(TokenRefreshSweep);
      await sweep.cleanUp();
      expect((await view(connectionId)).hasCredentials).toBe(true);
      expect((await view(connectionId)).registration).toMatchObject({
        status: "error",
        lastError: "http_500",
      });

      thumbtack.state.down = false;
      await settled(app, connectionId);
      expect(thumbtack.hooks(business)).toEqual([]);
      expect((await view(connectionId)).registration).toMatchObject({
        status: "manual",
        providerWebhookId: null,
        lastError: null,
      });
      await sweep.cleanUp();
      const after = await view(connectionId);
      expect([after.status, after.hasCredentials]).toEqual(["disabled", false]);
      // The webhook went first, then the grant was revoked and the tokens deleted.
      const deletedAt = thumbtack.server.received.find(
        (request) => request.method === "DELETE" && request.path.endsWith(`/webhooks/${hook!.webhookID}`),
      )!.at;
      const revokedAt = oauth.server.received.find((request) => request.path === "/thumbtack/revoke")!.at;
      expect(deletedAt).toBeLessThanOrEqual(revokedAt);
    });

    it("a sync repairs drift: ours disabled on Thumbtack's side is recreated and the stale one removed; a webhook not ours is left alone", async () => {
      const business = newBusiness("tt");
      const connectionId = await connectWithOAuth(app, oauth, tenant, "thumbtack", business);
      await settled(app, connectionId);
      const [ours] = thumbtack.hooks(business);
      ours!.enabled = false; // someone switched it off in Thumbtack
      const foreign = {
        webhookID: "999",
        webhookURL: "https://other.example/hook",
        eventTypes: ["ReviewCreatedV4"],
        enabled: true,
      };
      thumbtack.add(business, foreign);
      const sync = await tenant.admin.post(`/admin/connections/${connectionId}/sync`);
      expect(sync.status).toBe(202);
      expect(sync.body.connection.id).toBe(connectionId);
      await settled(app, connectionId);
      const now = thumbtack.hooks(business);
      expect(now).toHaveLength(2);
      expect(now).toContainEqual(foreign);
      const recreated = now.find((hook) => hook.webhookID !== foreign.webhookID)!;
      expect(recreated.webhookID).not.toBe(ours!.webhookID);
      expect(recreated).toMatchObject({ enabled: true, webhookURL: ours!.webhookURL, auth: ours!.auth });
      expect((await view(connectionId)).registration).toMatchObject({
        status: "active",
        providerWebhookId: recreated.webhookID,
      });
    });

    it("a provider answering 500 leaves registration error with lastError; it recovers by itself once the provider answers again, and ingest is unaffected", async () => {
      thumbtack.state.down = true;
      const business = newBusiness("tt");
      const connectionId = await connectWithOAuth(app, oauth, tenant, "thumbtack", business);
      const failed = await waitFor(
        () => view(connectionId),
        (connection) => connection.registration.status === "error",
      );
      expect(failed.registration).toMatchObject({
        status: "error",
        lastError: "http_500",
        providerWebhookId: null,
      });
      expect(failed.status).toBe("active");
      // The agency is told: one registration.error alert, counting the failed attempts.
      const registrationAlerts = () =>
        tenant.admin
          .get(`/admin/alerts?type=registration.error&connectionId=${connectionId}`)
          .then((answer) => answer.body.items as { status: string; errorCode: string; operation: string }[]);
      expect(await registrationAlerts()).toEqual([
        expect.objectContaining({ status: "open", errorCode: "http_500", operation: "provider-sync" }),
      ]);
      // Deliveries are accepted meanwhile, with the credentials the refused creation carried.
      const refused = thumbtack.server.received.find(
        (request) => request.method === "POST" && request.path === `/api/v4/businesses/${business}/webhooks`,
      )!;
      const credentials = (JSON.parse(refused.body) as { auth: { username: string; password: string } }).auth;
      expect((await deliverThumbtack(connectionId, basic(credentials), "neg-down-1")).status).toBe(202);

      thumbtack.state.down = false;
      const recovered = await waitFor(
        () => view(connectionId),
        (connection) => connection.registration.status === "active",
      );
      expect(recovered.registration).toMatchObject({
        lastError: null,
        providerWebhookId: expect.any(String),
      });
      await settled(app, connectionId);
      expect(thumbtack.hooks(business)).toHaveLength(1);
      expect(thumbtack.hooks(business)[0]!.auth).toEqual(credentials);
      expect((await registrationAlerts()).map((alert) => alert.status)).toEqual(["resolved"]);
    });

    it("a 403 from the webhooks API fails the registration for good (error, dead) but not the connection: its auto-reply still goes out", async () => {
      thumbtack.state.forbidden = true;
      const business = newBusiness("tt");
      const connectionId = await connectWithOAuth(app, oauth, tenant, "thumbtack", business, {
        settings: { autoResponse: { enabled: true, text: "Thanks, we will call you." } },
      });
      const [job] = await settled(app, connectionId);
      expect([job!.status, job!.last_error_code]).toEqual(["dead", "http_403"]);
      const failed = await view(connectionId);
      expect([failed.status, failed.registration.status, failed.registration.lastError]).toEqual([
        "active",
        "error",
        "http_403",
      ]);
      const refused = thumbtack.server.received.find(
        (request) => request.method === "POST" && request.path === `/api/v4/businesses/${business}/webhooks`,
      )!;
      const credentials = (JSON.parse(refused.body) as { auth: { username: string; password: string } }).auth;
      expect((await deliverThumbtack(connectionId, basic(credentials), "neg-forbidden-1")).status).toBe(202);
      const jobs = await waitFor(
        () =>
          app.sql
            .query<{ operation: string; status: string }>(
              "SELECT operation, status FROM jobs WHERE connection_id = $1 AND receipt_id IS NOT NULL ORDER BY operation",
              [connectionId],
            )
            .then((result) => result.rows),
        (rows) => rows.length === 2 && rows.every((row) => row.status === "succeeded"),
      );
      expect(jobs.map((row) => row.operation)).toEqual(["initial-response", "lead-upsert"]);
      const replies = thumbtack.server.received.filter(
        (request) =>
          request.method === "POST" && request.path === "/api/v4/negotiations/neg-forbidden-1/messages",
      );
      expect(replies).toHaveLength(1);
    });

    it("token auth registers the ?token= URL without credentials; header auth stays manual", async () => {
      const tokenBusiness = newBusiness("tt");
      const withToken = await connectWithOAuth(app, oauth, tenant, "thumbtack", tokenBusiness, {
        inboundAuth: { type: "token" },
      });
      await settled(app, withToken);
      const [hook] = thumbtack.hooks(tokenBusiness);
      expect(hook!.auth).toBeUndefined();
      expect(hook!.webhookURL).toMatch(new RegExp(`/webhooks/thumbtack/${withToken}\\?token=.+`));
      const body = fixture("thumbtack/negotiation-created-v4.json").json as { data: object };
      const delivered = await post(
        `${app.url}${new URL(hook!.webhookURL).pathname}${new URL(hook!.webhookURL).search}`,
        { ...body, data: { ...body.data, negotiationID: "neg-token-1" } },
      );
      expect(delivered.status).toBe(202);

      const headerBusiness = newBusiness("tt");
      const withHeader = await connectWithOAuth(app, oauth, tenant, "thumbtack", headerBusiness, {
        inboundAuth: { type: "header", headerName: "x-leadgate-secret" },
      });
      expect((await view(withHeader)).registration).toEqual({
        status: "manual",
        providerWebhookId: null,
        expiresAt: null,
        lastSyncedAt: null,
        lastError: null,
      });
      expect(await syncJobs(app, withHeader)).toEqual([]);
      expect(thumbtack.hooks(headerBusiness)).toEqual([]);
    });
  });

  describe("Yelp", () => {
    it("connect subscribes the business; the daily sweep restores a subscription removed on Yelp's side and removes ours of disabled connections only; disconnect unsubscribes before the tokens go", async () => {
      const business = newBusiness("yelp");
      const connectionId = await connectWithOAuth(app, oauth, tenant, "yelp", business);
      await settled(app, connectionId);
      expect(yelp.subscribed.has(business)).toBe(true);
      const subscribe = yelp.server.received.find(
        (request) => request.method === "POST" && request.path === "/v3/businesses/subscriptions",
      )!;
      expect(JSON.parse(subscribe.body)).toEqual({
        business_ids: [business],
        subscription_types: ["WEBHOOK"],
      });
      expect((await view(connectionId)).registration).toEqual({
        status: "active",
        providerWebhookId: null,
        expiresAt: null,
        lastSyncedAt: expect.any(String),
        lastError: null,
      });

      // Yelp dropped it; a business Leadgate holds only disabled, and one it never knew, are listed too.
      yelp.subscribed.delete(business);
      const gone = newBusiness("yelp");
      const pasted = await app.operator.post("/admin/connections", {
        tenantId: tenant.tenantId,
        provider: "yelp",
        externalAccountId: gone,
        displayName: "Old",
        inboundAuth: { type: "none" },
      });
      expect(pasted.body.connection.registration.status).toBe("manual");
      expect((await tenant.admin.delete(`/admin/connections/${pasted.body.connection.id}`)).status).toBe(204);
      yelp.subscribed.add(gone);
      yelp.subscribed.add("someoneElsesBiz");

      const sweep = app.worker.get(RegistrationSweep);
      expect(await sweep.sweep()).toBe(0); // synced a moment ago: not due
      await app.sql.query(
        "UPDATE connections SET registration_due_at = now() - interval '1 second' WHERE id = $1",
        [connectionId],
      );
      expect(await sweep.sweep()).toBe(1);
      await waitFor(
        () => syncJobs(app, connectionId),
        (jobs) => jobs.length === 2 && jobs.every((job) => job.status === "succeeded"),
      );
      expect([...yelp.subscribed].sort()).toEqual([business, "someoneElsesBiz"].sort());
      const resynced = await view(connectionId);
      expect(resynced.registration.status).toBe("active");

      expect((await tenant.admin.delete(`/admin/connections/${connectionId}`)).status).toBe(204);
      await settled(app, connectionId);
      expect(yelp.subscribed.has(business)).toBe(false);
      await app.worker.get(TokenRefreshSweep).cleanUp();
      expect((await view(connectionId)).hasCredentials).toBe(false);
    });

    it("a Yelp answering 500 leaves registration error; the connection recovers by itself", async () => {
      yelp.state.down = true;
      const business = newBusiness("yelp");
      const connectionId = await connectWithOAuth(app, oauth, tenant, "yelp", business);
      const failed = await waitFor(
        () => view(connectionId),
        (connection) => connection.registration.status === "error",
      );
      expect(failed.registration.lastError).toBe("http_500");
      yelp.state.down = false;
      await waitFor(
        () => view(connectionId),
        (connection) => connection.registration.status === "active",
      );
      expect(yelp.subscribed.has(business)).toBe(true);
    });
  });

  it("a registration that ran out of attempts is dead, visible, and an operator's replay registers it", async () => {
    yelp.state.down = true;
    const business = newBusiness("yelp");
    const connectionId = await connectWithOAuth(app, oauth, tenant, "yelp", business);
    await waitFor(
      () => view(connectionId),
      (connection) => connection.registration.status === "error",
    );
    // Its last attempt now (the default 10 span about a day of backoff).
    await app.sql.query(
      "UPDATE jobs SET max_attempts = attempts WHERE connection_id = $1 AND operation = 'provider-sync'",
      [connectionId],
    );
    const [dead] = await settled(app, connectionId);
    expect([dead!.status, dead!.last_error_code]).toEqual(["dead", "http_500"]);
    const { rows } = await app.sql.query<{ id: string }>("SELECT id FROM jobs WHERE job_key = $1", [
      dead!.job_key,
    ]);
    const listed = await tenant.admin.get(`/admin/jobs/${rows[0]!.id}`);
    expect(listed.body).toMatchObject({ operation: "provider-sync", status: "dead" });

    yelp.state.down = false;
    const replayed = await tenant.admin.post(`/admin/jobs/${rows[0]!.id}/replay`);
    expect(replayed.status).toBeLessThan(300);
    await waitFor(
      () => view(connectionId),
      (connection) => connection.registration.status === "active",
    );
    expect(yelp.subscribed.has(business)).toBe(true);
    // The run records the registration before the statement that records its success commits.
    expect(await settled(app, connectionId)).toEqual([
      { job_key: dead!.job_key, status: "succeeded", last_error_code: "http_500" },
    ]);
  });

  describe("POST /admin/connections/{id}/sync", () => {
    it("202 { connection, run } starts a registration job and a reconciliation run now; an operator may sync any tenant's connection", async () => {
      const business = newBusiness("tt");
      const connectionId = await connectWithOAuth(app, oauth, tenant, "thumbtack", business);
      await settled(app, connectionId);
      const before = (await syncJobs(app, connectionId)).length;
      const answer = await tenant.admin.post(`/admin/connections/${connectionId}/sync`);
      expect(answer.status).toBe(202);
      expect(answer.body.connection).toMatchObject({ id: connectionId, registration: { status: "active" } });
      expect(answer.text).not.toContain("thumbtack-access-"); // no token in a view
      const jobs = await settled(app, connectionId);
      expect(jobs).toHaveLength(before + 1);
      expect(jobs.at(-1)!.job_key).toMatch(new RegExp(`^provider-sync:${connectionId}:sync:\\d+$`));
      // The run's reconciliation is keyed by the run (sync-runs.test.ts: how calls join runs).
      const runs = await waitFor(
        () => reconciliationRuns(app, connectionId),
        (rows) => rows.length === 1 && rows[0]!.status === "succeeded",
      );
      expect(runs.map((run) => run.job_key)).toEqual([
        `reconciliation:${connectionId}.run.${answer.body.run.id}`,
      ]);
      // That run finished: the operator's call starts the next.
      const next = await app.operator.post(`/admin/connections/${connectionId}/sync`);
      expect([next.status, next.body.run.coalesced]).toEqual([202, false]);
      expect(await settled(app, connectionId)).toHaveLength(before + 2);
      // Still one webhook: a sync keeps what is there.
      expect(thumbtack.hooks(business)).toHaveLength(1);
      const audit = await app.sql.query(
        "SELECT count(*)::int AS n FROM audit_entries WHERE action = 'connection.sync' AND target_id = $1",
        [connectionId],
      );
      expect(audit.rows[0].n).toBe(2);
    });

    it("a connection with pasted credentials keeps its manual registration: 202, no registration job, no webhook call; its leads are still reconciled", async () => {
      const business = newBusiness("tt");
      const created = await app.operator.post("/admin/connections", {
        tenantId: tenant.tenantId,
        provider: "thumbtack",
        externalAccountId: business,
        displayName: "Pasted",
        inboundAuth: { type: "basic" },
        credentials: { accessToken: "pasted-token" },
      });
      const id = created.body.connection.id as string;
      const webhookCalls = () =>
        thumbtack.server.received.filter((request) =>
          request.path.includes(`/businesses/${business}/webhooks`),
        );
      const sent = webhookCalls().length;
      const answer = await tenant.admin.post(`/admin/connections/${id}/sync`);
      expect([answer.status, answer.body.connection.registration.status]).toEqual([202, "manual"]);
      expect(await syncJobs(app, id)).toEqual([]);
      await waitFor(
        () => reconciliationRuns(app, id),
        (runs) => runs.length === 1 && runs[0]!.status === "succeeded",
      );
      expect(webhookCalls().length).toBe(sent);
    });

    it("rejections: no key 401, another tenant's or an unknown id 404, a disabled connection 409 connection_disabled, Static Forms 409 sync_not_supported; none makes a job", async () => {
      const business = newBusiness("tt");
      const connectionId = await connectWithOAuth(app, oauth, tenant, "thumbtack", business);
      await settled(app, connectionId);
      const jobsBefore = (await syncJobs(app, connectionId)).length;

      const anonymous = await fetch(`${app.url}/admin/connections/${connectionId}/sync`, { method: "POST" });
      expect(anonymous.status).toBe(401);

      const other = await createTenant(app.url);
      const foreign = await other.admin.post(`/admin/connections/${connectionId}/sync`);
      expect([foreign.status, foreign.body.error]).toEqual([404, "not_found"]);
      const unknown = await tenant.admin.post("/admin/connections/00000000-0000-4000-8000-000000000000/sync");
      expect([unknown.status, unknown.body.error]).toEqual([404, "not_found"]);
      const malformed = await tenant.admin.post("/admin/connections/not-an-id/sync");
      expect([malformed.status, malformed.body.error]).toEqual([404, "not_found"]);
      expect(await syncJobs(app, connectionId)).toHaveLength(jobsBefore);

      const forms = await tenant.admin.post("/admin/connections", {
        provider: "staticforms",
        externalAccountId: newBusiness("sf"),
        displayName: "Site form",
        inboundAuth: { type: "bearer" },
      });
      expect(forms.body.connection.registration.status).toBe("manual");
      const unsupported = await tenant.admin.post(`/admin/connections/${forms.body.connection.id}/sync`);
      expect([unsupported.status, unsupported.body.error]).toEqual([409, "sync_not_supported"]);
      expect(await syncJobs(app, forms.body.connection.id as string)).toEqual([]);

      expect((await tenant.admin.delete(`/admin/connections/${connectionId}`)).status).toBe(204);
      await settled(app, connectionId);
      const removed = (await syncJobs(app, connectionId)).length;
      const refused = await tenant.admin.post(`/admin/connections/${connectionId}/sync`);
      expect([refused.status, refused.body.error]).toEqual([409, "connection_disabled"]);
      expect(await syncJobs(app, connectionId)).toHaveLength(removed);
    });
  });
});

describe("provider registration (Yelp self-serve webhooks)", () => {
  const { oauth, yelp, app } = useProviderSyncApp({ YELP_WEBHOOK_MODE: "self-serve" });

  it("connect creates a 14-day webhook; one expiring in 2 h is renewed by the first sync (new one first, then the old deleted); disconnect deletes it", async () => {
    const tenant = await createTenant(app.url);
    const business = newBusiness("yelp");
    const connectionId = await connectWithOAuth(app, oauth, tenant, "yelp", business);
    await settled(app, connectionId);
    expect(yelp.subscribed.size).toBe(0);
    const [hook] = [...yelp.hooks.values()];
    expect(hook).toMatchObject({
      webhook_url: `${PUBLIC_BASE_URL}/webhooks/yelp/${YELP_TOKEN}`,
      restricted_business_ids: [business],
    });
    const first = (await tenant.admin.get(`/admin/connections/${connectionId}`)).body.registration;
    expect(first).toMatchObject({ status: "active", providerWebhookId: hook!.webhook_id });
    expect(Date.parse(first.expiresAt as string) - Date.now()).toBeGreaterThan(13 * 86_400_000);

    // Two hours left (the daily sync was missed, say).
    const soon = new Date(Date.now() + 2 * 3_600_000);
    hook!.expiration_date = soon.toISOString();
    await app.sql.query("UPDATE connections SET registration_expires_at = $2 WHERE id = $1", [
      connectionId,
      soon,
    ]);
    expect((await tenant.admin.post(`/admin/connections/${connectionId}/sync`)).status).toBe(202);
    await waitFor(
      () => syncJobs(app, connectionId),
      (jobs) => jobs.length === 2 && jobs.every((job) => job.status === "succeeded"),
    );
    const renewed = (await tenant.admin.get(`/admin/connections/${connectionId}`)).body.registration;
    expect(renewed.providerWebhookId).not.toBe(hook!.webhook_id);
    expect(Date.parse(renewed.expiresAt as string) - Date.now()).toBeGreaterThan(13 * 86_400_000);
    expect([...yelp.hooks.keys()]).toEqual([renewed.providerWebhookId]);
    const calls = yelp.server.received
      .filter((request) => request.path.startsWith("/v3/webhooks"))
      .map((request) => `${request.method} ${request.path}`);
    expect(calls).toEqual([
      "POST /v3/webhooks",
      "POST /v3/webhooks",
      `DELETE /v3/webhooks/${hook!.webhook_id}`,
    ]);

    // A sync with two weeks left keeps it.
    expect((await tenant.admin.post(`/admin/connections/${connectionId}/sync`)).status).toBe(202);
    await settled(app, connectionId);
    expect([...yelp.hooks.keys()]).toEqual([renewed.providerWebhookId]);

    expect((await tenant.admin.delete(`/admin/connections/${connectionId}`)).status).toBe(204);
    await settled(app, connectionId);
    expect(yelp.hooks.size).toBe(0);
  });
});
