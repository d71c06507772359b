// Static Forms over HTTP against the real API, Postgres and Redis: every fixture, every inbound
// auth type, and every rejection row of api.md's response table (with zero rows written).
import { randomUUID } from "node:crypto";
import { storedFor } from "../support/database.js";
import { useApp } from "../support/harness.js";
import type { TestConnection } from "../support/tenants.js";
import { fixture, fixtureHeaders } from "../support/fixtures.js";
import { post } from "../support/http.js";

const submission = (
  submissionId: string,
  formData: Record<string, string> = { name: "Ann", email: "a@example.test" },
) => ({
  event: "form.submitted",
  timestamp: 1776003725,
  data: {
    submissionId,
    formData,
    apiKey: "sf_test_0a1b2c3d4e5f",
    recipientEmail: "leads@example.test",
    attachments: [],
  },
});

describe("POST /webhooks/staticforms/{connectionId}", () => {
  const app = useApp();
  let bearer: TestConnection;

  const urlOf = (connection: TestConnection) =>
    connection.webhookUrl.replace("http://localhost:3000", app.url);
  const auth = (connection: TestConnection) => ({
    authorization: `Bearer ${connection.secrets.bearerToken}`,
  });

  beforeAll(async () => {
    bearer = await app.createConnection({
      provider: "staticforms",
      inboundAuth: { type: "bearer" },
      settings: { crmDestination: { url: "http://127.0.0.1:9/crm" } },
    });
  });

  it("stores the fixture once: 202, then 200 duplicate with the same receipt", async () => {
    const headers = { ...fixtureHeaders("staticforms/form-submitted.headers.json"), ...auth(bearer) };
    const body = fixture("staticforms/form-submitted.json").text;

    const first = await post(urlOf(bearer), body, headers);
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ accepted: true, duplicate: false, receiptIds: [expect.any(String)] });

    // A byte-different retry of the same event (re-serialized) is still the same event.
    const retry = await post(urlOf(bearer), JSON.stringify(JSON.parse(body)), headers);
    expect(retry.status).toBe(200);
    expect(retry.body).toEqual({ accepted: true, duplicate: true, receiptIds: first.body.receiptIds });

    const { rows } = await app.sql.query(
      `SELECT event_id, lead_id, kind, status, duplicate_count,
              (SELECT payload FROM receipt_payloads p WHERE p.receipt_id = r.id) AS raw_payload
       FROM receipts r WHERE id = $1`,
      [first.body.receiptIds[0]],
    );
    expect(rows[0]).toMatchObject({
      event_id: "sub_9f3k2m7q1x",
      lead_id: "sub_9f3k2m7q1x",
      kind: "lead.created",
      status: "accepted",
      duplicate_count: 1,
    });
    expect(JSON.stringify(rows[0].raw_payload)).not.toContain("sf_test_0a1b2c3d4e5f");
    const jobs = await app.sql.query(
      "SELECT operation, status, job_key FROM jobs WHERE receipt_id = $1 ORDER BY operation",
      [first.body.receiptIds[0]],
    );
    expect(jobs.rows).toEqual([
      {
        operation: "crm-delivery",
        status: "waiting", // for the receipt's lead-upsert
        job_key: expect.stringMatching(/^crm-delivery:[0-9a-f]{64}$/),
      },
      {
        operation: "lead-upsert",
        status: "queued",
        job_key: expect.stringMatching(/^lead-upsert:[0-9a-f]{64}$/),
      },
    ]);
    expect(await storedFor(app.sql, bearer.tenantId)).toMatchObject({ conflicts: 0 });
  });

  it("accepts the legacy flat body with the data.apiKey check", async () => {
    const apiKey = await app.createConnection({
      provider: "staticforms",
      inboundAuth: { type: "apiKey", apiKey: "sf_test_0a1b2c3d4e5f" },
    });
    const body = fixture("staticforms/legacy-flat.json").text;
    expect((await post(urlOf(apiKey), body)).status).toBe(202);
    expect((await post(urlOf(apiKey), body)).status).toBe(200);
    const wrongKey = { ...fixture("staticforms/legacy-flat.json").json, apiKey: "sf_test_wrong" };
    expect((await post(urlOf(apiKey), wrongKey)).status).toBe(401);
    expect(await storedFor(app.sql, apiKey.tenantId)).toEqual({ receipts: 1, jobs: 1, conflicts: 0 });
  });

  describe.each([
    [
      "bearer",
      {},
      (s: Record<string, string>) => ({ headers: { authorization: `Bearer ${s.bearerToken}` } }),
    ],
    [
      "basic",
      {},
      (s: Record<string, string>) => ({
        headers: { authorization: `Basic ${Buffer.from(`${s.username}:${s.password}`).toString("base64")}` },
      }),
    ],
    [
      "header",
      { headerName: "X-Hook-Secret" },
      (s: Record<string, string>) => ({ headers: { [s.headerName!]: s.headerValue! } }),
    ],
    ["token", {}, () => ({ headers: {} })],
    ["apiKey", { apiKey: "sf_test_0a1b2c3d4e5f" }, () => ({ headers: {} })],
  ] as const)("inbound auth %s", (type, extra, credentialsOf) => {
    let connection: TestConnection;
    beforeAll(async () => {
      connection = await app.createConnection({
        provider: "staticforms",
        inboundAuth: { type, ...extra },
      });
    });

    it("accepts the right credentials", async () => {
      const answer = await post(
        urlOf(connection),
        submission(`ok-${type}`),
        credentialsOf(connection.secrets).headers,
      );
      expect(answer.status).toBe(202);
      expect(await storedFor(app.sql, connection.tenantId)).toEqual({ receipts: 1, jobs: 1, conflicts: 0 });
    });

    it("answers 401 to missing or wrong credentials and writes nothing", async () => {
      const before = await storedFor(app.sql, connection.tenantId);
      const url = urlOf(connection).replace(/\?token=.*/, "");
      const wrong: Record<string, string> = {
        bearer: { authorization: "Bearer nope" },
        basic: {
          authorization: `Basic ${Buffer.from(`${connection.secrets.username}:nope`).toString("base64")}`,
        },
        header: { "x-hook-secret": "nope" },
        token: {},
        apiKey: {},
      }[type];
      const wrongBody =
        type === "apiKey"
          ? { ...submission("bad"), data: { ...submission("bad").data, apiKey: "nope" } }
          : submission("bad");
      const { apiKey: _apiKey, ...withoutKey } = submission("bad").data;
      for (const attempt of [
        await post(url, { ...submission("bad"), data: withoutKey }),
        await post(type === "token" ? `${url}?token=nope` : url, wrongBody, wrong),
      ]) {
        expect(attempt.status).toBe(401);
        expect(attempt.body).toEqual({ error: "unauthorized", message: expect.any(String) });
      }
      expect(await storedFor(app.sql, connection.tenantId)).toEqual(before);
    });
  });

  it("400 idempotency_key_mismatch when the header names another submission; nothing written", async () => {
    const before = await storedFor(app.sql, bearer.tenantId);
    const answer = await post(urlOf(bearer), submission("sub-a"), {
      ...auth(bearer),
      "idempotency-key": "staticforms:form.submitted:sub-b",
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe("idempotency_key_mismatch");
    expect(await storedFor(app.sql, bearer.tenantId)).toEqual(before);
    const quoted = await post(urlOf(bearer), submission("sub-a"), {
      ...auth(bearer),
      "idempotency-key": '"staticforms:form.submitted:sub-a"',
    });
    expect(quoted.status).toBe(202);
  });

  it.each([
    ["malformed JSON", '{"event":"form.submitted",', "invalid_envelope"],
    ["an empty body", "", "invalid_envelope"],
    ["a JSON array", "[1,2,3]", "invalid_envelope"],
    [
      "no submissionId",
      JSON.stringify({ event: "form.submitted", data: { formData: {} } }),
      "invalid_envelope",
    ],
    [
      "formData of the wrong type",
      JSON.stringify({ event: "form.submitted", data: { submissionId: "x", formData: "hi" } }),
      "invalid_envelope",
    ],
  ])("400 for %s; nothing written", async (_, body, code) => {
    const before = await storedFor(app.sql, bearer.tenantId);
    const answer = await post(urlOf(bearer), body, auth(bearer));
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: code, message: expect.any(String) });
    expect(await storedFor(app.sql, bearer.tenantId)).toEqual(before);
  });

  it.each([
    [
      "a NUL character",
      '{"event":"form.submitted","data":{"submissionId":"nul","formData":{"name":"a\\u0000b"}}}',
    ],
    [
      "an unpaired surrogate",
      '{"event":"form.submitted","data":{"submissionId":"sur","formData":{"name":"a\\ud800b"}}}',
    ],
    [
      "a NUL character in a key",
      '{"event":"form.submitted","data":{"submissionId":"nul-key","formData":{"na\\u0000me":"a"}}}',
    ],
    [
      "an unpaired surrogate in a list",
      '{"event":"form.submitted","data":{"submissionId":"sur-list","formData":{"tags":["ok",["\\udc00"]]}}}',
    ],
    [
      "nesting deeper than 64 levels",
      `{"event":"form.submitted","data":{"submissionId":"deep","formData":{"x":${"[".repeat(62)}${"]".repeat(62)}}}}`,
    ],
  ])("400 for a body with %s (it could never be stored); nothing written", async (_, body) => {
    const before = await storedFor(app.sql, bearer.tenantId);
    const answer = await post(urlOf(bearer), body, auth(bearer));
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe("invalid_envelope");
    expect(await storedFor(app.sql, bearer.tenantId)).toEqual(before);
  });

  it("a body nested exactly 64 levels deep is accepted", async () => {
    const body = `{"event":"form.submitted","data":{"submissionId":"deep-64","formData":{"x":${"[".repeat(61)}${"]".repeat(61)}}}}`;
    expect((await post(urlOf(bearer), body, auth(bearer))).status).toBe(202);
  });

  it("an unreadable or out-of-range timestamp does not fail the delivery", async () => {
    const body = { ...submission("ms-time"), timestamp: 1776003725000 };
    expect((await post(urlOf(bearer), body, auth(bearer))).status).toBe(202);
    const { rows } = await app.sql.query("SELECT occurred_at FROM receipts WHERE event_id = 'ms-time'");
    expect(new Date(rows[0].occurred_at).getUTCFullYear()).toBeLessThan(10000);
  });

  it("401 for a repeated ?token= parameter", async () => {
    const connection = await app.createConnection({
      provider: "staticforms",
      inboundAuth: { type: "token" },
    });
    const token = connection.secrets.token!;
    const url = `${app.url}/webhooks/staticforms/${connection.connectionId}?token=${token}&token=${token}`;
    expect((await post(url, submission("twice"))).status).toBe(401);
  });

  it("401 comes before the envelope is read: a bad body without credentials is refused as unauthorized", async () => {
    const answer = await post(urlOf(bearer), { event: "form.submitted", data: {} });
    expect(answer.status).toBe(401);
  });

  it("404 unknown_connection for an unknown id, a malformed id, or another provider's connection", async () => {
    const thumbtack = await app.createConnection({
      provider: "thumbtack",
      inboundAuth: { type: "basic" },
    });
    for (const id of [randomUUID(), "not-a-uuid", thumbtack.connectionId]) {
      const answer = await post(`${app.url}/webhooks/staticforms/${id}`, submission("x"), auth(bearer));
      expect(answer.status).toBe(404);
      expect(answer.body.error).toBe("unknown_connection");
    }
  });

  it("410 connection_disabled for a disabled connection; nothing written", async () => {
    const disabled = await app.createConnection({
      provider: "staticforms",
      inboundAuth: { type: "bearer" },
    });
    await app.sql.query("UPDATE connections SET status = 'disabled' WHERE id = $1", [disabled.connectionId]);
    const answer = await post(urlOf(disabled), submission("d1"), auth(disabled));
    expect(answer.status).toBe(410);
    expect(answer.body.error).toBe("connection_disabled");
    expect(await storedFor(app.sql, disabled.tenantId)).toEqual({ receipts: 0, jobs: 0, conflicts: 0 });
  });

  it("a paused connection accepts and stores, with its jobs held", async () => {
    const paused = await app.createConnection({
      provider: "staticforms",
      inboundAuth: { type: "bearer" },
      settings: { crmDestination: { url: "http://127.0.0.1:9/crm" } },
    });
    await app.sql.query("UPDATE connections SET status = 'paused' WHERE id = $1", [paused.connectionId]);
    const answer = await post(urlOf(paused), submission("p1"), auth(paused));
    expect(answer.status).toBe(202);
    const { rows } = await app.sql.query("SELECT status FROM jobs WHERE tenant_id = $1", [paused.tenantId]);
    expect(rows).toEqual([{ status: "held" }, { status: "held" }]);
  });

  it("413 payload_too_large over the body limit; nothing written", async () => {
    const before = await storedFor(app.sql, bearer.tenantId);
    const answer = await post(
      urlOf(bearer),
      submission("big", { message: "x".repeat(300 * 1024) }),
      auth(bearer),
    );
    expect(answer.status).toBe(413);
    expect(answer.body).toEqual({ error: "payload_too_large", message: expect.stringMatching(/too large/i) });
    expect(await storedFor(app.sql, bearer.tenantId)).toEqual(before);
  });

  it("431 headers_too_large over the header limit, with Connection: close; nothing written", async () => {
    const before = await storedFor(app.sql, bearer.tenantId);
    const answer = await post(urlOf(bearer), submission("huge-headers"), {
      ...auth(bearer),
      "x-padding": "a".repeat(40_000),
    });
    expect(answer.status).toBe(431);
    expect(answer.body).toEqual({ error: "headers_too_large", message: expect.any(String) });
    // The server closes the socket: a keep-alive client must not send its next request on it.
    expect(answer.headers.get("connection")).toBe("close");
    expect(await storedFor(app.sql, bearer.tenantId)).toEqual(before);
  });

  it.each(["text/plain", "application/x-www-form-urlencoded", "application/xml"])(
    "415 unsupported_media_type for %s; nothing written",
    async (contentType) => {
      const before = await storedFor(app.sql, bearer.tenantId);
      const answer = await post(urlOf(bearer), JSON.stringify(submission("ct")), {
        ...auth(bearer),
        "content-type": contentType,
      });
      expect(answer.status).toBe(415);
      expect(answer.body).toEqual({
        error: "unsupported_media_type",
        message: expect.stringMatching(/json|media type/i),
      });
      expect(await storedFor(app.sql, bearer.tenantId)).toEqual(before);
    },
  );

  it("receipts and jobs get time-ordered ids (UUID version 7): a later delivery's sort after an earlier one's", async () => {
    const ids: string[] = [];
    for (const submissionId of [randomUUID(), randomUUID()]) {
      const answer = await post(urlOf(bearer), submission(submissionId), auth(bearer));
      expect(answer.status).toBe(202);
      ids.push(answer.body.receiptIds[0]!);
      await new Promise((resolve) => setTimeout(resolve, 5)); // another millisecond
    }
    const { rows } = await app.sql.query<{ receipt: string; job: string; ms: string }>(
      `SELECT r.id AS receipt, j.id AS job, (extract(epoch FROM r.received_at) * 1000)::bigint::text AS ms
       FROM receipts r JOIN jobs j ON j.receipt_id = r.id AND j.operation = 'lead-upsert'
       WHERE r.id = ANY($1::uuid[]) ORDER BY r.received_at`,
      [ids],
    );
    expect(rows.map((row) => row.receipt)).toEqual(ids);
    for (const row of rows) {
      for (const id of [row.receipt, row.job]) {
        expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        // Its first 48 bits: the Unix milliseconds of its insert, the receipt's received_at.
        const ms = parseInt(id.replaceAll("-", "").slice(0, 12), 16);
        expect(Math.abs(ms - Number(row.ms))).toBeLessThan(1_000);
      }
    }
    expect(ids[0]! < ids[1]!).toBe(true);
    // Attempts and leads, which the worker writes, take the same default.
    const { rows: defaults } = await app.sql.query<{ table: string; expression: string }>(
      `SELECT c.relname AS table, pg_get_expr(d.adbin, d.adrelid) AS expression
       FROM pg_attrdef d JOIN pg_class c ON c.oid = d.adrelid
       JOIN pg_attribute a ON a.attrelid = d.adrelid AND a.attnum = d.adnum
       WHERE a.attname = 'id' AND c.relname IN ('receipts', 'jobs', 'job_attempts', 'leads') ORDER BY 1`,
    );
    expect(defaults).toEqual(
      ["job_attempts", "jobs", "leads", "receipts"].map((table) => ({
        table,
        expression: "leadgate_uuid_v7()",
      })),
    );
  });

  it("an event type we do not act on: 200 ignored, receipt kept, no jobs", async () => {
    const connection = await app.createConnection({
      provider: "staticforms",
      inboundAuth: { type: "bearer" },
    });
    const answer = await post(
      urlOf(connection),
      { event: "form.viewed", data: { submissionId: "v1" } },
      auth(connection),
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({
      accepted: true,
      ignored: true,
      duplicate: false,
      receiptIds: [expect.any(String)],
    });
    expect(await storedFor(app.sql, connection.tenantId)).toEqual({ receipts: 1, jobs: 0, conflicts: 0 });
  });

  it("the same key with another payload answers as a duplicate and records a conflict", async () => {
    const connection = await app.createConnection({
      provider: "staticforms",
      inboundAuth: { type: "bearer" },
    });
    const first = await post(urlOf(connection), submission("c1", { name: "Original" }), auth(connection));
    const changed = await post(urlOf(connection), submission("c1", { name: "Changed" }), auth(connection));
    expect(first.status).toBe(202);
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual({ accepted: true, duplicate: true, receiptIds: first.body.receiptIds });
    expect(await storedFor(app.sql, connection.tenantId)).toEqual({ receipts: 1, jobs: 1, conflicts: 1 });
    const { rows } = await app.sql.query(
      "SELECT stored_digest <> incoming_digest AS differs, receipt_id FROM payload_conflicts WHERE tenant_id = $1",
      [connection.tenantId],
    );
    expect(rows).toEqual([{ differs: true, receipt_id: first.body.receiptIds[0] }]);
  });

  it("echoes the request id (given or generated) in x-request-id", async () => {
    const given = await post(urlOf(bearer), submission("rid"), {
      ...auth(bearer),
      "x-request-id": "req-abc-123",
    });
    expect(given.headers.get("x-request-id")).toBe("req-abc-123");
    const generated = await post(urlOf(bearer), "{", auth(bearer));
    expect(generated.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });
});
