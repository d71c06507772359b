// Real answers against docs/openapi.json, strictly (test/support/openapi-validator.ts): a spread of
// operations driven through their success and error paths, each request body checked against the
// documented request schema and each answer against the documented answer of its status, with ajv.
// An answer whose status is not listed, a body of an undocumented media type, or a field the
// schema does not name fails the test, as it would a client generated from the document.
import { readFileSync } from "node:fs";
import { OPERATOR_KEY, staticFormsDelivery } from "../support/admin.js";
import { PASSWORD, uniqueEmail } from "../support/console.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { type OpenApiDocument, openApiValidator } from "../support/openapi-validator.js";
import { waitFor } from "../support/wait.js";

const YELP_TOKEN = "yelp-url-token-openapi-0123456789";
const MISSING = "00000000-0000-4000-8000-000000000000";

interface Sent {
  key?: string | null;
  body?: unknown;
  /** A body the API must refuse: not checked against the documented request schema. */
  invalid?: true;
  /** Sent as is (not JSON-encoded), with its own content type. */
  raw?: { text: string; type: string };
  headers?: Record<string, string>;
}

describe("docs/openapi.json against real answers", () => {
  const crm = useFakeServer({ status: 200, body: { ok: true } });
  const app = useApp({
    worker: true,
    env: {
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      YELP_WEBHOOK_TOKEN: YELP_TOKEN,
      // Yelp's OAuth client (never called here: the start only signs a state); Thumbtack has none.
      YELP_OAUTH_CLIENT_ID: "leadgate-yelp",
      YELP_OAUTH_CLIENT_SECRET: "yelp-client-secret-0123456789",
      YELP_OAUTH_AUTHORIZE_URL: "http://127.0.0.1:9/yelp/authorize",
      YELP_OAUTH_TOKEN_URL: "http://127.0.0.1:9/yelp/token",
      DISPATCHER_INTERVAL_MS: "300",
    },
  });
  const document = JSON.parse(
    readFileSync(new URL("../../docs/openapi.json", import.meta.url), "utf8"),
  ) as OpenApiDocument;
  const validator = openApiValidator(document);
  let problems: string[] = [];

  afterEach(() => {
    const found = problems;
    problems = [];
    expect(found).toEqual([]);
  });

  /** One request, its answer checked against the document; the parsed answer for the test's own asserts. */
  async function send(method: string, url: string, sent: Sent = {}) {
    const headers: Record<string, string> = { ...sent.headers };
    const key = sent.key === undefined ? OPERATOR_KEY : sent.key;
    if (key !== null) headers.authorization ??= `Bearer ${key}`;
    let body: string | undefined;
    if (sent.raw) {
      headers["content-type"] = sent.raw.type;
      body = sent.raw.text;
    } else if (sent.body !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(sent.body);
    }
    const response = await fetch(`${app.url}${url}`, { method, headers, body, redirect: "manual" });
    const text = await response.text();
    const contentType = response.headers.get("content-type");
    problems.push(
      ...validator.check({
        method,
        url,
        requestBody: sent.raw || sent.invalid ? undefined : sent.body,
        status: response.status,
        contentType,
        text,
      }),
    );
    let json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read its fields
    try {
      json = text && contentType?.startsWith("application/json") ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    return { status: response.status, body: json, headers: response.headers };
  }

  const state = {
    tenantId: "",
    tenantKey: "",
    connectionId: "",
    bearer: "",
    receiptId: "",
    leadId: "",
    jobId: "",
  };

  it("operations: health, readiness, metrics, this document, the queue dashboard", async () => {
    expect((await send("GET", "/health", { key: null })).status).toBe(200);
    expect((await send("GET", "/health/ready", { key: null })).status).toBe(200);
    expect((await send("GET", "/metrics", { key: null })).status).toBe(200);
    expect((await send("GET", "/docs-json", { key: null })).status).toBe(200);
    expect((await send("GET", "/docs", { key: null })).status).toBe(200);
    expect((await send("GET", "/admin/queues", { key: null })).status).toBe(401);
  });

  it("tenants and API keys: created, read, updated, refused", async () => {
    const created = await send("POST", "/admin/tenants", { body: { name: "OpenAPI agency" } });
    expect(created.status).toBe(201);
    state.tenantId = created.body.tenant.id;
    state.tenantKey = created.body.apiKey.key;
    expect((await send("POST", "/admin/tenants", { body: { name: "" }, invalid: true })).status).toBe(400);
    expect((await send("POST", "/admin/tenants", { key: state.tenantKey, body: { name: "x" } })).status).toBe(
      403,
    );
    expect((await send("GET", "/admin/tenants", { key: null })).status).toBe(401);
    expect((await send("GET", "/admin/tenants", { key: "lg_wrong_key_0123456789" })).status).toBe(401);
    expect((await send("GET", "/admin/tenants?limit=2")).status).toBe(200);
    expect((await send("GET", `/admin/tenants/${state.tenantId}`)).status).toBe(200);
    expect((await send("GET", `/admin/tenants/${MISSING}`)).status).toBe(404);
    expect((await send("GET", `/admin/tenants/${"x".repeat(101)}`)).status).toBe(414);
    expect((await send("GET", "/admin/tenants/%zz")).status).toBe(400);
    const updated = await send("PATCH", `/admin/tenants/${state.tenantId}`, {
      key: state.tenantKey,
      body: {
        defaults: {
          autoResponse: { enabled: true, text: "Hi {{lead.firstName|there}}, thanks!" },
          responseTarget: { seconds: 600 },
        },
      },
    });
    expect(updated.status).toBe(200);
    expect(
      (
        await send("PATCH", `/admin/tenants/${state.tenantId}`, {
          body: { defaults: { autoResponse: null } },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await send("POST", "/admin/tenants", {
          raw: { text: "name=x", type: "application/x-www-form-urlencoded" },
        })
      ).status,
    ).toBe(415);
    expect(
      (await send("POST", "/admin/tenants", { raw: { text: "{", type: "application/json" } })).status,
    ).toBe(400);
    const big = JSON.stringify({ name: "x".repeat(300_000) });
    expect(
      (await send("POST", "/admin/tenants", { raw: { text: big, type: "application/json" } })).status,
    ).toBe(413);

    const key = await send("POST", "/admin/api-keys", {
      key: state.tenantKey,
      body: { name: "export", role: "tenant-admin" },
    });
    expect(key.status).toBe(201);
    expect((await send("GET", "/admin/api-keys", { key: state.tenantKey })).status).toBe(200);
    expect((await send("DELETE", `/admin/api-keys/${key.body.id}`, { key: state.tenantKey })).status).toBe(
      204,
    );
    expect((await send("DELETE", `/admin/api-keys/${MISSING}`, { key: state.tenantKey })).status).toBe(404);
    expect((await send("GET", "/admin/providers")).status).toBe(200);
  });

  it("connections: created, read, changed, rotated, refused", async () => {
    const body = {
      tenantId: state.tenantId,
      provider: "staticforms",
      externalAccountId: "form-openapi-1",
      displayName: "Contact form",
      inboundAuth: { type: "bearer" },
      settings: { crmDestination: { url: `${crm.url}/leads` } },
    };
    const created = await send("POST", "/admin/connections", { body });
    expect(created.status).toBe(201);
    state.connectionId = created.body.connection.id;
    state.bearer = created.body.secrets.bearerToken;
    expect((await send("POST", "/admin/connections", { body })).status).toBe(409);
    expect((await send("POST", "/admin/connections", { body: { ...body, tenantId: MISSING } })).status).toBe(
      404,
    );
    const id = state.connectionId;
    expect((await send("GET", `/admin/connections?tenantId=${state.tenantId}`)).status).toBe(200);
    expect((await send("GET", `/admin/connections/${id}`)).status).toBe(200);
    const patched = await send("PATCH", `/admin/connections/${id}`, {
      body: {
        displayName: "Contact form (site)",
        settings: {
          autoResponse: { enabled: false, text: "Thanks {{lead.name|there}}!" },
          responseTarget: null,
        },
      },
    });
    expect([patched.status, patched.status === 200 ? "ok" : patched.body]).toEqual([200, "ok"]);
    expect((await send("POST", `/admin/connections/${id}/pause`)).status).toBe(200);
    expect((await send("POST", `/admin/connections/${id}/resume`)).status).toBe(200);
    expect(
      (await send("POST", `/admin/connections/${id}/rotate-secret`, { body: { graceSeconds: 60 } })).status,
    ).toBe(200);
    expect((await send("POST", `/admin/connections/${id}/rotate-crm-secret`, { body: {} })).status).toBe(200);
    expect((await send("POST", `/admin/connections/${id}/revoke-previous-secret`)).status).toBe(200);
    const rotated = await send("POST", `/admin/connections/${id}/rotate-secret`, {
      body: { graceSeconds: 0 },
    });
    state.bearer = rotated.body.secrets.bearerToken;
    expect((await send("POST", `/admin/connections/${id}/sync`)).status).toBe(409);
    expect((await send("POST", `/admin/connections/${id}/reply-preview`, { body: {} })).status).toBeLessThan(
      500,
    );
    expect(
      (
        await send("POST", `/admin/connections/${id}/backfill`, {
          body: { from: "2026-01-01T00:00:00Z", to: "2026-01-02T00:00:00Z", dryRun: true },
        })
      ).status,
    ).toBeLessThan(500);
    expect((await send("GET", `/admin/backfills/${MISSING}`)).status).toBe(404);
    const oauth = { ...body, externalAccountId: "yelp-business-openapi", inboundAuth: undefined };
    expect(
      (await send("POST", "/admin/connections/oauth", { body: { ...oauth, provider: "yelp" } })).status,
    ).toBe(201);
    expect(
      (
        await send("POST", "/admin/connections/oauth", {
          body: { ...oauth, provider: "thumbtack", externalAccountId: "700000000000000001" },
        })
      ).status,
    ).toBe(501);
  });

  it("webhooks: stored, duplicate, refused; the Yelp handshake", async () => {
    const url = `/webhooks/staticforms/${state.connectionId}`;
    const delivery = staticFormsDelivery("sub-openapi-1");
    const auth = { authorization: `Bearer ${state.bearer}` };
    const stored = await send("POST", url, { key: null, body: delivery, headers: auth });
    expect(stored.status).toBe(202);
    state.receiptId = stored.body.receiptIds[0];
    expect((await send("POST", url, { key: null, body: delivery, headers: auth })).status).toBe(200);
    expect(
      (await send("POST", url, { key: null, body: delivery, headers: { authorization: "Bearer no" } }))
        .status,
    ).toBe(401);
    expect(
      (await send("POST", `/webhooks/staticforms/${MISSING}`, { key: null, body: delivery, headers: auth }))
        .status,
    ).toBe(404);
    expect(
      (await send("POST", url, { key: null, raw: { text: "a=b", type: "text/plain" }, headers: auth }))
        .status,
    ).toBe(415);
    expect(
      (await send("POST", url, { key: null, raw: { text: "{", type: "application/json" }, headers: auth }))
        .status,
    ).toBe(400);
    expect(
      (await send("GET", `/webhooks/yelp/${YELP_TOKEN}?verification=Abc123`, { key: null })).status,
    ).toBe(200);
    expect((await send("GET", `/webhooks/yelp/${YELP_TOKEN}?verification=a-b`, { key: null })).status).toBe(
      400,
    );
    expect((await send("GET", "/webhooks/yelp/wrong-token?verification=abc", { key: null })).status).toBe(
      401,
    );
    expect((await send("POST", "/webhooks/yelp/wrong-token", { key: null, body: { data: {} } })).status).toBe(
      401,
    );
    expect((await send("POST", `/webhooks/thumbtack/${MISSING}`, { key: null, body: {} })).status).toBe(404);
  });

  it("receipts, jobs, leads: lists and views, with and without a result and a first response", async () => {
    const jobs = async () =>
      (
        await app.sql.query<{ id: string; status: string; operation: string }>(
          "SELECT id, status, operation FROM jobs WHERE receipt_id = $1",
          [state.receiptId],
        )
      ).rows;
    const finished = await waitFor(
      jobs,
      (rows) => rows.length > 0 && rows.every((row) => row.status === "succeeded"),
    );
    state.jobId = finished.find((row) => row.operation === "crm-delivery")!.id;
    expect((await send("GET", `/admin/receipts?connectionId=${state.connectionId}`)).status).toBe(200);
    expect((await send("GET", `/admin/receipts/${state.receiptId}`)).status).toBe(200);
    expect((await send("GET", `/admin/receipts/${MISSING}`)).status).toBe(404);
    expect((await send("GET", `/admin/jobs?receiptId=${state.receiptId}`)).status).toBe(200);
    expect((await send("GET", `/admin/jobs/${state.jobId}`)).status).toBe(200);
    expect((await send("GET", "/admin/jobs?status=nonsense")).status).toBe(400);
    expect((await send("GET", `/admin/jobs/summary?tenantId=${state.tenantId}`)).status).toBe(200);
    const leads = await send("GET", `/admin/leads?connectionId=${state.connectionId}`);
    expect(leads.status).toBe(200);
    state.leadId = leads.body.items[0].id;
    expect((await send("GET", `/admin/leads/${state.leadId}`)).status).toBe(200);
    expect(
      (await send("POST", `/admin/leads/${state.leadId}/mark-replied`, { body: { via: "phone" } })).status,
    ).toBe(202);
    expect((await send("GET", `/admin/leads/${state.leadId}`)).status).toBe(200);
    expect((await send("GET", `/admin/leads?connectionId=${state.connectionId}`)).status).toBe(200);
    expect((await send("GET", `/admin/overview?tenantId=${state.tenantId}`)).status).toBe(200);
    expect((await send("GET", `/admin/speed-to-lead?tenantId=${state.tenantId}&bucket=day`)).status).toBe(
      200,
    );
    expect((await send("GET", "/admin/conflicts")).status).toBe(200);
    expect((await send("GET", `/admin/audit?tenantId=${state.tenantId}`)).status).toBe(200);
  });

  it("replays: one job, a receipt, a filtered batch and its progress", async () => {
    expect((await send("POST", `/admin/jobs/${state.jobId}/replay`, { body: {} })).status).toBe(409);
    expect((await send("POST", `/admin/jobs/${state.jobId}/replay`, { body: { force: true } })).status).toBe(
      202,
    );
    expect((await send("POST", `/admin/receipts/${state.receiptId}/replay`)).status).toBe(202);
    const filter = { connectionId: state.connectionId, status: "dead" };
    expect((await send("POST", "/admin/replays", { body: { filter, dryRun: true } })).status).toBe(200);
    const batch = await send("POST", "/admin/replays", { body: { filter, limit: 5 } });
    expect(batch.status).toBe(202);
    expect((await send("GET", `/admin/replays/${batch.body.id}`)).status).toBe(200);
    expect(
      (await send("POST", "/admin/replays", { body: { filter: { ...filter, connectionId: MISSING } } }))
        .status,
    ).toBe(404);
  });

  it("alerts and notification channels", async () => {
    expect((await send("GET", `/admin/alerts?tenantId=${state.tenantId}`)).status).toBe(200);
    expect((await send("GET", `/admin/alerts/${MISSING}`)).status).toBe(404);
    expect((await send("POST", `/admin/alerts/${MISSING}/acknowledge`)).status).toBe(404);
    expect((await send("POST", `/admin/alerts/${MISSING}/resolve`)).status).toBe(404);
    const channel = await send("POST", "/admin/notification-channels", {
      key: state.tenantKey,
      body: { type: "webhook", url: `${crm.url}/alerts` },
    });
    expect(channel.status).toBe(201);
    const id = channel.body.channel.id;
    expect(
      (await send("POST", "/admin/notification-channels", { key: state.tenantKey, body: {}, invalid: true }))
        .status,
    ).toBe(400);
    expect((await send("GET", "/admin/notification-channels", { key: state.tenantKey })).status).toBe(200);
    expect(
      (await send("POST", `/admin/notification-channels/${id}/test`, { key: state.tenantKey })).status,
    ).toBe(200);
    expect(
      (await send("POST", `/admin/notification-channels/${id}/resend-confirmation`, { key: state.tenantKey }))
        .status,
    ).toBe(409);
    expect(
      (await send("DELETE", `/admin/notification-channels/${id}`, { key: state.tenantKey })).status,
    ).toBe(204);
    expect((await send("GET", "/notification-channels/confirm?token=nope", { key: null })).status).toBe(400);
    expect((await send("POST", "/notification-channels/confirm?token=nope", { key: null })).status).toBe(400);
  });

  it("users and console sessions", async () => {
    const email = uniqueEmail("openapi");
    const created = await send("POST", "/admin/users", {
      key: state.tenantKey,
      body: { email, role: "tenant-viewer" },
    });
    expect(created.status).toBe(201);
    expect(
      (await send("POST", "/admin/users", { key: state.tenantKey, body: { email, role: "tenant-viewer" } }))
        .status,
    ).toBe(409);
    expect((await send("GET", "/admin/users", { key: state.tenantKey })).status).toBe(200);
    const userId = created.body.user.id;
    const again = await send("POST", `/admin/users/${userId}/invitation`, { key: state.tenantKey });
    expect(again.status).toBe(201);
    const token = new URL(again.body.invitation.url).searchParams.get("token")!;
    expect(
      (
        await send("POST", "/console/api/invitations/accept", {
          key: null,
          body: { token, password: "short" },
        })
      ).status,
    ).toBe(400);
    expect(
      (
        await send("POST", "/console/api/invitations/accept", {
          key: null,
          body: { token, password: PASSWORD },
        })
      ).status,
    ).toBe(204);
    expect(
      (
        await send("POST", "/console/api/session", {
          key: null,
          body: { email, password: "wrong password!" },
        })
      ).status,
    ).toBe(401);
    const session = await send("POST", "/console/api/session", {
      key: null,
      body: { email, password: PASSWORD },
    });
    expect(session.status).toBe(200);
    const cookie = session.headers.get("set-cookie")!.split(";")[0]!;
    expect((await send("GET", "/console/api/session", { key: null, headers: { cookie } })).status).toBe(200);
    expect((await send("GET", "/admin/leads", { key: null, headers: { cookie } })).status).toBe(200);
    expect(
      (
        await send("POST", `/admin/connections/${state.connectionId}/pause`, {
          key: null,
          headers: { cookie },
        })
      ).status,
    ).toBe(403);
    expect((await send("DELETE", "/console/api/session", { key: null, headers: { cookie } })).status).toBe(
      403,
    );
    const csrf = { cookie, "x-csrf-token": session.body.csrfToken };
    expect((await send("DELETE", "/console/api/session", { key: null, headers: csrf })).status).toBe(204);
    expect((await send("GET", "/console/api/session", { key: null, headers: { cookie } })).status).toBe(401);
    expect((await send("DELETE", `/admin/users/${userId}`, { key: state.tenantKey })).status).toBe(204);
  });

  it("OAuth callback with a forged state; a connection disabled", async () => {
    expect((await send("GET", "/oauth/yelp/callback?code=c&state=forged", { key: null })).status).toBe(400);
    expect((await send("GET", "/oauth/thumbtack/callback?code=c&state=forged", { key: null })).status).toBe(
      501,
    );
    expect((await send("GET", "/oauth/nowhere/callback?code=c&state=forged", { key: null })).status).toBe(
      404,
    );
    expect((await send("POST", `/admin/connections/${MISSING}/reconnect`, { body: {} })).status).toBe(404);
    expect((await send("DELETE", `/admin/connections/${state.connectionId}`)).status).toBe(204);
    const url = `/webhooks/staticforms/${state.connectionId}`;
    const auth = { authorization: `Bearer ${state.bearer}` };
    expect((await send("POST", url, { key: null, body: staticFormsDelivery(), headers: auth })).status).toBe(
      410,
    );
  });

  it("clients: created, listed, read, updated, refused, deleted", async () => {
    const key = state.tenantKey;
    const created = await send("POST", "/admin/clients", {
      key,
      body: { name: "Roofer", timezone: "America/Denver", branding: { accentColor: "#123456" } },
    });
    expect(created.status).toBe(201);
    const id = created.body.client.id as string;
    expect((await send("POST", "/admin/clients", { key, body: { name: "" }, invalid: true })).status).toBe(
      400,
    );
    expect((await send("GET", "/admin/clients", { key })).status).toBe(200);
    expect((await send("GET", `/admin/clients/${id}`, { key })).status).toBe(200);
    expect((await send("GET", `/admin/clients/${MISSING}`, { key })).status).toBe(404);
    const patched = await send("PATCH", `/admin/clients/${id}`, {
      key,
      body: { defaults: { responseTarget: { seconds: 120 } }, branding: { accentColor: null } },
    });
    expect(patched.status).toBe(200);
    expect((await send("DELETE", `/admin/clients/${id}`, { key })).status).toBe(204);
    const first = (await send("GET", "/admin/clients", { key })).body.items[0].id as string;
    expect((await send("DELETE", `/admin/clients/${first}`, { key })).status).toBe(409);
  });

  it("covers a good spread of the document's operations", () => {
    const operations = new Set([...validator.covered].map((entry) => entry.split(" ").slice(0, 2).join(" ")));
    const documented = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const untouched = documented.filter((operation) => !operations.has(operation));
    console.log(
      `openapi answers: ${validator.covered.size} (operation, status) pairs over ${operations.size} of ${documented.length} operations; not driven: ${untouched.join(", ")}`,
    );
    expect(operations.size).toBeGreaterThanOrEqual(65);
  });
});
