// Connections through the admin API: secrets shown once and stored encrypted, validation, rotation
// with a grace period, pause/resume (held and blocked jobs re-queued), disable, and the audit log.
import { adminAs, createTenant, OPERATOR_KEY, staticFormsDelivery } from "../support/admin.js";
import { fixture } from "../support/fixtures.js";
import { AlertBook } from "../../src/alerts/alert-book.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import { waitFor } from "../support/wait.js";

describe("admin API: connections", () => {
  const thumbtack = useFakeServer({ status: 201, body: {} }, (request) =>
    request.method === "GET" ? { status: 200, body: { messages: [] } } : undefined,
  );
  const crm = useFakeServer({ status: 200, body: {} });
  const app = useApp({
    worker: true,
    env: () => ({
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      THUMBTACK_API_BASE_URL: thumbtack.url,
      JOB_BACKOFF_BASE_MS: "50",
      DISPATCHER_INTERVAL_MS: "300",
    }),
  });
  let tenant: Awaited<ReturnType<typeof createTenant>>;
  const operator = () => app.operator;

  beforeAll(async () => {
    tenant = await createTenant(app.url);
  });

  const staticForms = (extra: object = {}) =>
    tenant.admin.post("/admin/connections", {
      provider: "staticforms",
      externalAccountId: `form-${Math.random().toString(36).slice(2)}`,
      displayName: "Contact form",
      inboundAuth: { type: "bearer" },
      ...extra,
    });
  const deliver = (connectionId: string, token: string, submissionId?: string) =>
    post(`${app.url}/webhooks/staticforms/${connectionId}`, staticFormsDelivery(submissionId), {
      authorization: `Bearer ${token}`,
    });
  const jobStatuses = async (connectionId: string) =>
    (
      await app.sql.query<{ operation: string; status: string }>(
        "SELECT operation, status FROM jobs WHERE connection_id = $1 ORDER BY operation, created_at",
        [connectionId],
      )
    ).rows;
  const auditOf = async (targetId: string) =>
    (
      await app.sql.query<{ action: string; api_key_id: string }>(
        "SELECT action, api_key_id FROM audit_entries WHERE target_id = $1 ORDER BY created_at",
        [targetId],
      )
    ).rows;

  it("secrets are shown once, stored as ciphertext, and no GET ever returns one", async () => {
    const secrets: string[] = [tenant.key, OPERATOR_KEY];
    const created = [
      await staticForms({ inboundAuth: { type: "basic" } }),
      await staticForms({ inboundAuth: { type: "header", headerName: "X-Form-Secret" } }),
      await staticForms({
        inboundAuth: { type: "token" },
        settings: { crmDestination: { url: `${crm.url}/a` } },
      }),
      // The fixture's own data.apiKey: it arrives inside every delivery, and must not leave through a receipt.
      await staticForms({ inboundAuth: { type: "apiKey", apiKey: "sf_test_0a1b2c3d4e5f" } }),
      await tenant.admin.post("/admin/connections", {
        provider: "thumbtack",
        externalAccountId: "700000000000000001",
        displayName: "Thumbtack",
        inboundAuth: { type: "basic" },
        credentials: { accessToken: "tt-access-token-abcdef", refreshToken: "tt-refresh-token-abcdef" },
      }),
    ];
    expect(created.map((answer) => answer.status)).toEqual([201, 201, 201, 201, 201]);
    expect(Object.keys(created[0]!.body.secrets)).toEqual(["username", "password"]);
    expect(created[1]!.body.secrets).toEqual({
      headerName: "x-form-secret",
      headerValue: expect.any(String),
    });
    expect(Object.keys(created[2]!.body.secrets).sort()).toEqual(["crmSigningSecret", "token"]);
    expect(created[2]!.body.webhookUrl).toContain(`?token=${created[2]!.body.secrets.token}`);
    expect(created[2]!.body.secrets.crmSigningSecret).toMatch(/^whsec_/);
    // Every value of `secrets` but the header's name (which the connection shows as configuration).
    for (const answer of created) {
      const { headerName: _name, ...values } = answer.body.secrets as Record<string, string>;
      secrets.push(...Object.values(values));
    }
    secrets.push("sf_test_0a1b2c3d4e5f", "tt-access-token-abcdef", "tt-refresh-token-abcdef");
    const rotated = await tenant.admin.post(
      `/admin/connections/${created[0]!.body.connection.id}/rotate-secret`,
    );
    expect(rotated.status).toBe(200);
    secrets.push(...Object.values<string>(rotated.body.secrets));
    const crmRotated = await tenant.admin.post(
      `/admin/connections/${created[2]!.body.connection.id}/rotate-crm-secret`,
    );
    expect(crmRotated.status).toBe(200);
    secrets.push(crmRotated.body.secrets.crmSigningSecret as string);

    // Something to read on every route: a receipt (with the apiKey in its delivery), its jobs, a lead.
    const apiKeyConnection = created[3]!.body.connection.id as string;
    const delivered = await post(
      `${app.url}/webhooks/staticforms/${apiKeyConnection}`,
      staticFormsDelivery(),
    );
    expect(delivered.status).toBe(202);
    await waitFor(
      () => tenant.admin.get("/admin/leads"),
      (answer) => answer.body.items.length === 1,
    );

    // An alert to read, and notification channels' secrets (a webhook signing secret, a Slack URL):
    // the channels come after the alert opened, so no notification is sent to their unused port.
    const alertId = await app.api.app.get(AlertBook, { strict: false }).raise(undefined, {
      tenantId: tenant.tenantId,
      type: "payload.conflict",
      connectionId: apiKeyConnection,
      errorCode: "digest_mismatch",
      summary: "A conflict to read",
    });
    const webhookChannel = await tenant.admin.post("/admin/notification-channels", {
      type: "webhook",
      url: "http://127.0.0.1:9/alerts",
    });
    secrets.push(webhookChannel.body.secrets.signingSecret as string);
    const slackUrl = "http://127.0.0.1:9/services/T000/B000/secretpart";
    expect(
      (await tenant.admin.post("/admin/notification-channels", { type: "slack", url: slackUrl })).status,
    ).toBe(201);
    secrets.push(slackUrl);

    const document = (await (await fetch(`${app.url}/docs-json`)).json()) as {
      openapi: string;
      paths: object;
    };
    const ids: Record<string, string> = {
      alerts: alertId,
      tenants: tenant.tenantId,
      clients: (await tenant.admin.get("/admin/clients")).body.items[0].id,
      "api-keys": tenant.keyId,
      connections: created[2]!.body.connection.id,
      receipts: delivered.body.receiptIds[0]!,
      jobs: (await tenant.admin.get("/admin/jobs")).body.items[0].id,
      leads: (await tenant.admin.get("/admin/leads")).body.items[0].id,
      replays: (await tenant.admin.post("/admin/replays", { filter: {} })).body.id,
      // A finished backfill (starting one needs a provider API: test/admin/backfill.test.ts).
      backfills: (
        await app.sql.query<{ id: string }>(
          `INSERT INTO backfills (tenant_id, connection_id, window_from, window_to, status)
           VALUES ($1, $2, now() - interval '1 day', now(), 'done') RETURNING id`,
          [tenant.tenantId, created[2]!.body.connection.id],
        )
      ).rows[0]!.id,
    };
    const gets = Object.entries(document.paths as Record<string, object>)
      .filter(
        ([path, operations]) => path.startsWith("/admin/") && "get" in operations && path !== "/admin/queues",
      )
      .map(([path]) => path.replace("{id}", ids[path.split("/")[2]!]!));
    expect(gets.length).toBeGreaterThanOrEqual(14);
    for (const path of gets) {
      for (const key of [tenant.key, OPERATOR_KEY]) {
        const answer = await adminAs(app.url, key).get(path);
        expect([path, answer.status]).toEqual([path, 200]);
        expect([path, secrets.filter((secret) => answer.text.includes(secret))]).toEqual([path, []]);
      }
    }

    const stored = await app.sql.query(
      `SELECT inbound_secrets, previous_secrets, credentials, crm_signing_secret, previous_crm_signing_secret
       FROM connections WHERE tenant_id = $1`,
      [tenant.tenantId],
    );
    const columns = stored.rows
      .flatMap((row) => Object.values(row))
      .filter((value) => value !== null) as string[];
    expect(columns.length).toBeGreaterThanOrEqual(8);
    for (const value of columns) expect(value).toMatch(/^v2\.[0-9a-f]{8}\./);
    const everything = JSON.stringify((await app.sql.query("SELECT * FROM connections")).rows);
    const keys = JSON.stringify((await app.sql.query("SELECT * FROM api_keys")).rows);
    expect(secrets.filter((secret) => everything.includes(secret) || keys.includes(secret))).toEqual([]);
  });

  it("invalid bodies: 400 validation_failed with the field errors, nothing written", async () => {
    const before = await app.sql.query("SELECT count(*)::int AS n FROM connections");
    const bad = [
      {
        body: {
          provider: "myspace",
          externalAccountId: "x",
          displayName: "x",
          inboundAuth: { type: "bearer" },
        },
        field: "provider",
      },
      {
        body: {
          provider: "staticforms",
          externalAccountId: "x",
          displayName: "x",
          inboundAuth: { type: "bearer" },
          color: "red",
        },
        field: "color",
      },
      {
        body: {
          provider: "staticforms",
          externalAccountId: "",
          displayName: "x",
          inboundAuth: { type: "bearer" },
        },
        field: "externalAccountId",
      },
      { body: { provider: "staticforms", externalAccountId: "x", displayName: "x" }, field: "inboundAuth" },
      {
        body: {
          provider: "staticforms",
          externalAccountId: "x",
          displayName: "x",
          inboundAuth: { type: "bearer", extra: 1 },
        },
        field: "inboundAuth.extra",
      },
      {
        body: {
          provider: "thumbtack",
          externalAccountId: "700000000000000404",
          displayName: "x",
          inboundAuth: { type: "bearer" }, // Thumbtack sends Basic, a custom header or a ?token= only
        },
        field: "inboundAuth.type",
      },
      {
        body: {
          provider: "staticforms",
          externalAccountId: "x",
          displayName: "x",
          inboundAuth: { type: "apiKey" },
        },
        field: "inboundAuth.apiKey",
      },
      {
        body: {
          provider: "staticforms",
          externalAccountId: "x",
          displayName: "x",
          inboundAuth: { type: "header", headerName: "Authorization" },
        },
        field: "inboundAuth.headerName",
      },
      {
        body: {
          provider: "staticforms",
          externalAccountId: "x",
          displayName: "x",
          inboundAuth: { type: "bearer" },
          settings: { crmDestination: { url: "ftp://crm" } },
        },
        field: "settings.crmDestination.url",
      },
      {
        body: {
          provider: "staticforms",
          externalAccountId: "x",
          displayName: "x",
          inboundAuth: { type: "bearer" },
          settings: { autoResponse: { enabled: "yes", text: "hi" } },
        },
        field: "settings.autoResponse.enabled",
      },
    ];
    for (const { body, field } of bad) {
      const answer = await tenant.admin.post("/admin/connections", body);
      expect([field, answer.status, answer.body.error]).toEqual([field, 400, "validation_failed"]);
      expect(Object.keys(answer.body.details)).toContain(field);
    }
    const noTenant = await operator().post("/admin/connections", {
      provider: "staticforms",
      externalAccountId: "x",
      displayName: "x",
      inboundAuth: { type: "bearer" },
    });
    expect([noTenant.status, Object.keys(noTenant.body.details)]).toEqual([400, ["tenantId"]]);
    const notJson = await fetch(`${app.url}/admin/connections`, {
      method: "POST",
      headers: { authorization: `Bearer ${tenant.key}`, "content-type": "application/json" },
      body: "{not json",
    });
    expect([notJson.status, ((await notJson.json()) as { error: string }).error]).toEqual([
      400,
      "validation_failed",
    ]);
    for (const query of [
      "limit=0",
      "limit=201",
      "limit=abc",
      "cursor=%25%25",
      "provider=aol",
      "from=yesterday",
      "tenantId=7",
    ]) {
      const answer = await tenant.admin.get(`/admin/connections?${query}`);
      expect([query, answer.status, answer.body.error]).toEqual([query, 400, "validation_failed"]);
    }
    const after = await app.sql.query("SELECT count(*)::int AS n FROM connections");
    expect(after.rows).toEqual(before.rows);

    const first = await staticForms({ externalAccountId: "taken-form" });
    expect(first.status).toBe(201);
    const again = await staticForms({ externalAccountId: "taken-form" });
    expect([again.status, again.body.error]).toEqual([409, "connection_exists"]);
    const id = first.body.connection.id as string;
    const badPatches: [object, string][] = [
      [{ status: "active" }, "status"],
      [{ displayName: null }, "displayName"],
      [{ credentials: [{ accessToken: "x" }] }, "credentials"],
      [{ settings: { autoResponse: [{ enabled: true, text: "x" }] } }, "settings.autoResponse"],
      [{ settings: "on" }, "settings"],
    ];
    for (const [body, field] of badPatches) {
      const answer = await tenant.admin.patch(`/admin/connections/${id}`, body);
      expect([field, answer.status, Object.keys(answer.body.details ?? {})]).toEqual([field, 400, [field]]);
    }
    const nullTenant = await operator().post("/admin/connections", {
      tenantId: null,
      provider: "staticforms",
      externalAccountId: "x",
      displayName: "x",
      inboundAuth: { type: "bearer" },
    });
    expect([nullTenant.status, Object.keys(nullTenant.body.details)]).toEqual([400, ["tenantId"]]);
    const strange = [
      `/admin/connections?cursor=${Buffer.from(`2026-01-01T00:00:00.000Z|${"-".repeat(36)}`).toString("base64url")}`,
      "/admin/receipts?from=-100000-01-01T00:00:00Z",
      "/admin/receipts?to=99999-01-01",
      "/admin/jobs?from=5",
      "/admin/leads?q=%00",
      "/admin/receipts?leadId=a%00b",
    ];
    for (const path of strange) {
      const answer = await tenant.admin.get(path);
      expect([path, answer.status, answer.body.error]).toEqual([path, 400, "validation_failed"]);
    }
    const replays: [object, string][] = [
      [{ filter: { from: true } }, "filter.from"],
      [{ filter: { to: "9999999-01-01" } }, "filter.to"],
      [{ filter: {}, dryRun: null }, "dryRun"],
      [{ filter: [] }, "filter"],
    ];
    const batches = (await app.sql.query("SELECT count(*)::int AS n FROM replay_batches")).rows;
    for (const [body, field] of replays) {
      const answer = await tenant.admin.post("/admin/replays", body);
      expect([field, answer.status, Object.keys(answer.body.details ?? {})]).toEqual([field, 400, [field]]);
    }
    expect((await app.sql.query("SELECT count(*)::int AS n FROM replay_batches")).rows).toEqual(batches);
  });

  it("PATCH changes only what it names; null removes a setting", async () => {
    const created = await staticForms({
      settings: {
        autoResponse: { enabled: false, text: "Hi!" },
        crmDestination: { url: `${crm.url}/patch-a` },
      },
    });
    const id = created.body.connection.id as string;
    const moved = await tenant.admin.patch(`/admin/connections/${id}`, {
      settings: { crmDestination: { url: `${crm.url}/patch-b` } },
    });
    expect([moved.status, moved.body.connection.settings, moved.body.secrets]).toEqual([
      200,
      { autoResponse: { enabled: false, text: "Hi!" }, crmDestination: { url: `${crm.url}/patch-b` } },
      {},
    ]);
    const renamed = await tenant.admin.patch(`/admin/connections/${id}`, { displayName: "Renamed" });
    expect([renamed.body.connection.displayName, renamed.body.connection.settings.autoResponse]).toEqual([
      "Renamed",
      { enabled: false, text: "Hi!" },
    ]);
    const removed = await tenant.admin.patch(`/admin/connections/${id}`, {
      settings: { autoResponse: null },
    });
    expect(removed.body.connection.settings).toEqual({ crmDestination: { url: `${crm.url}/patch-b` } });
    const audit = await app.sql.query<{ fields: string[] }>(
      "SELECT details->'fields' AS fields FROM audit_entries WHERE target_id = $1 AND action = 'connection.update' ORDER BY created_at",
      [id],
    );
    expect(audit.rows.map((row) => row.fields)).toEqual([
      ["settings", "settings.crmDestination"],
      ["displayName"],
      ["settings", "settings.autoResponse"],
    ]);

    // A new CRM destination on a connection that had none gets its signing secret, shown this once.
    const plain = await staticForms();
    const added = await tenant.admin.patch(`/admin/connections/${plain.body.connection.id}`, {
      settings: { crmDestination: { url: `${crm.url}/patch-c` } },
    });
    expect(added.body.secrets.crmSigningSecret).toMatch(/^whsec_/);
  });

  it("a held job of an active connection (what a resume racing a delivery leaves) is released by the dispatcher", async () => {
    const created = await staticForms();
    const id = created.body.connection.id as string;
    await tenant.admin.post(`/admin/connections/${id}/pause`);
    expect((await deliver(id, created.body.secrets.bearerToken as string)).status).toBe(202);
    await waitFor(
      () => jobStatuses(id),
      (rows) => rows.length === 1 && rows[0]!.status === "held",
    );
    // The connection becomes active without the resume route (as if the resume had committed first).
    await app.sql.query("UPDATE connections SET status = 'active' WHERE id = $1", [id]);
    await waitFor(
      () => jobStatuses(id),
      (rows) => rows[0]?.status === "succeeded",
    );
  });

  it("lists are paginated newest first with a cursor", async () => {
    const other = await createTenant(app.url);
    const made: string[] = [];
    for (let i = 0; i < 5; i++) {
      const answer = await other.admin.post("/admin/connections", {
        provider: "staticforms",
        externalAccountId: `page-${i}-${other.tenantId}`,
        displayName: `form ${i}`,
        inboundAuth: { type: "bearer" },
      });
      made.unshift(answer.body.connection.id);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await other.admin.get(`/admin/connections?limit=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.items.map((item: { id: string }) => item.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(seen).toEqual(made);
  });

  it("rotation: old and new secrets both work during the grace period, then only the new one", async () => {
    const created = await staticForms();
    const id = created.body.connection.id as string;
    const old = created.body.secrets.bearerToken as string;
    // A long grace, ended below by moving its expiry into the past: the deliveries during it take
    // however long this machine takes.
    const rotated = await tenant.admin.post(`/admin/connections/${id}/rotate-secret`, { graceSeconds: 600 });
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.secrets.bearerToken as string;
    expect(fresh).not.toBe(old);
    expect((await deliver(id, old)).status).toBe(202);
    expect((await deliver(id, fresh)).status).toBe(202);
    const view = await tenant.admin.get(`/admin/connections/${id}`);
    const expires = new Date(view.body.previousSecretExpiresAt as string).getTime();
    expect(expires - Date.now()).toBeGreaterThan(590_000);
    await app.sql.query(
      "UPDATE connections SET previous_secrets_expire_at = now() - interval '1 second' WHERE id = $1",
      [id],
    );
    const refused = await deliver(id, old);
    expect([refused.status, refused.body.error]).toEqual([401, "unauthorized"]);
    expect((await deliver(id, fresh)).status).toBe(202);

    // Without a grace period the old secret stops at once.
    const again = await tenant.admin.post(`/admin/connections/${id}/rotate-secret`, { graceSeconds: 0 });
    expect((await deliver(id, fresh)).status).toBe(401);
    expect((await deliver(id, again.body.secrets.bearerToken as string)).status).toBe(202);
    const receipts = await app.sql.query("SELECT count(*)::int AS n FROM receipts WHERE connection_id = $1", [
      id,
    ]);
    expect(receipts.rows).toEqual([{ n: 4 }]);
    expect((await auditOf(id)).map((row) => [row.action, row.api_key_id])).toEqual([
      ["connection.create", tenant.keyId],
      ["connection.rotate-secret", tenant.keyId],
      ["connection.rotate-secret", tenant.keyId],
    ]);
  });

  it("pause holds the jobs; resume runs them; every change is audited with the key that made it", async () => {
    const created = await staticForms({ settings: { crmDestination: { url: `${crm.url}/paused` } } });
    const id = created.body.connection.id as string;
    const token = created.body.secrets.bearerToken as string;
    const paused = await tenant.admin.post(`/admin/connections/${id}/pause`);
    expect([paused.status, paused.body.connection.status]).toEqual([200, "paused"]);
    expect((await deliver(id, token)).status).toBe(202);
    await waitFor(
      () => jobStatuses(id),
      (rows) => rows.length === 2 && rows.every((row) => row.status === "held"),
    );
    await app.settled(); // held at ingest: nothing in the queues, and a dispatcher pass leaves them held
    expect(crm.received.filter((request) => request.path === "/paused")).toEqual([]);

    const resumed = await operator().post(`/admin/connections/${id}/resume`);
    expect([resumed.status, resumed.body.connection.status, resumed.body.requeuedJobs]).toEqual([
      200,
      "active",
      2,
    ]);
    await waitFor(
      () => jobStatuses(id),
      (rows) => rows.every((row) => row.status === "succeeded"),
    );
    expect(crm.received.filter((request) => request.path === "/paused")).toHaveLength(1);
    const operatorKeyId = (await app.sql.query("SELECT id FROM api_keys WHERE role = 'operator'")).rows[0].id;
    expect((await auditOf(id)).map((row) => [row.action, row.api_key_id])).toEqual([
      ["connection.create", tenant.keyId],
      ["connection.pause", tenant.keyId],
      ["connection.resume", operatorKeyId],
    ]);
    const audit = await tenant.admin.get("/admin/audit");
    expect(audit.body.items.slice(0, 3).map((entry: { action: string }) => entry.action)).toEqual([
      "connection.resume",
      "connection.pause",
      "connection.create",
    ]);
  });

  it("resume after a credential error re-queues the blocked jobs with the new credentials", async () => {
    const created = await tenant.admin.post("/admin/connections", {
      provider: "thumbtack",
      externalAccountId: "700000000000000002",
      displayName: "Thumbtack",
      inboundAuth: { type: "basic" },
      credentials: { accessToken: "expired-token" },
      settings: { autoResponse: { enabled: true, text: "Thanks, we will call you." } },
    });
    const id = created.body.connection.id as string;
    const { username, password } = created.body.secrets as { username: string; password: string };
    const body = fixture("thumbtack/negotiation-created-v4.json").json as { data: object };
    thumbtack.reply({ status: 401 });
    const delivered = await post(
      `${app.url}/webhooks/thumbtack/${id}`,
      { ...body, data: { ...body.data, negotiationID: "neg-blocked-1" } },
      { authorization: `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}` },
    );
    expect(delivered.status).toBe(202);
    await waitFor(
      () => jobStatuses(id),
      (rows) => rows.some((row) => row.operation === "initial-response" && row.status === "blocked"),
    );
    expect((await tenant.admin.get(`/admin/connections/${id}`)).body.status).toBe("credential_error");

    const patched = await tenant.admin.patch(`/admin/connections/${id}`, {
      credentials: { accessToken: "fresh-token" },
    });
    expect([patched.status, patched.body.connection.hasCredentials]).toEqual([200, true]);
    const resumed = await tenant.admin.post(`/admin/connections/${id}/resume`);
    expect([resumed.status, resumed.body.requeuedJobs]).toEqual([200, 1]);
    await waitFor(
      () => jobStatuses(id),
      (rows) => rows.every((row) => row.status === "succeeded"),
    );
    const sent = thumbtack.received.filter((request) => request.method === "POST");
    expect(sent.at(-1)?.headers.authorization).toBe("Bearer fresh-token");
  });

  it("delete disables: deliveries answer 410, unfinished jobs are cancelled, history stays", async () => {
    const created = await staticForms();
    const id = created.body.connection.id as string;
    const token = created.body.secrets.bearerToken as string;
    await tenant.admin.post(`/admin/connections/${id}/pause`);
    expect((await deliver(id, token)).status).toBe(202);
    await waitFor(
      () => jobStatuses(id),
      (rows) => rows.length === 1 && rows[0]!.status === "held",
    );
    const deleted = await tenant.admin.delete(`/admin/connections/${id}`);
    expect([deleted.status, deleted.text]).toEqual([204, ""]);
    const refused = await deliver(id, token);
    expect([refused.status, refused.body.error]).toEqual([410, "connection_disabled"]);
    expect(await jobStatuses(id)).toEqual([{ operation: "lead-upsert", status: "cancelled" }]);
    const view = await tenant.admin.get(`/admin/connections/${id}`);
    expect([view.status, view.body.status]).toEqual([200, "disabled"]);
    const resume = await tenant.admin.post(`/admin/connections/${id}/resume`);
    expect([resume.status, resume.body.error]).toEqual([409, "connection_disabled"]);
    expect((await tenant.admin.delete(`/admin/connections/${id}`)).status).toBe(204);
    expect((await auditOf(id)).map((row) => row.action)).toEqual([
      "connection.create",
      "connection.pause",
      "connection.disable",
    ]);
  });
});
