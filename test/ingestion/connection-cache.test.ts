// The API keeps the connections it looked up (src/connections/connections.repository.ts) and checks
// each cached one when it writes (its version must still be the stored one). These tests change a
// connection through ANOTHER API process (or plain SQL, as a worker would), which tells this API
// nothing, and show that the next delivery to this API is decided on the connection as stored now:
// pause, disable, secret rotation, tenant defaults; with concurrent deliveries around a change.
import { randomUUID } from "node:crypto";
import { adminAs, OPERATOR_KEY } from "../support/admin.js";
import { useApp } from "../support/harness.js";
import { post } from "../support/http.js";
import type { TestConnection } from "../support/tenants.js";

describe("ingest: connections served from the API's cache", () => {
  const app = useApp({ env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY } });
  let other: ReturnType<typeof adminAs>;

  beforeAll(async () => {
    other = adminAs((await app.startApi()).url, OPERATOR_KEY);
  });

  const submission = (id: string = randomUUID()) => ({
    event: "form.submitted",
    data: { submissionId: id, formData: { name: "Ann", email: "a@example.test" } },
  });
  const deliver = (c: TestConnection, token = c.secrets.bearerToken!, body: object = submission()) =>
    post(`${app.url}/webhooks/staticforms/${c.connectionId}`, body, { authorization: `Bearer ${token}` });
  const staticForms = () =>
    app.createConnection({ provider: "staticforms", inboundAuth: { type: "bearer" } });
  const reads = async () => {
    const text = await (await fetch(`${app.url}/metrics`)).text();
    const count = (source: string) =>
      Number(
        new RegExp(`^leadgate_ingest_connection_reads_total\\{source="${source}"\\} (\\S+)$`, "m").exec(
          text,
        )?.[1] ?? 0,
      );
    return { cache: count("cache"), database: count("database") };
  };
  const rows = async (connectionId: string) =>
    (
      await app.sql.query<{ receipts: number; statuses: string[] }>(
        `SELECT (SELECT count(*)::int FROM receipts WHERE connection_id = $1) AS receipts,
                ARRAY(SELECT status FROM jobs WHERE connection_id = $1 ORDER BY created_at, status) AS statuses`,
        [connectionId],
      )
    ).rows[0]!;

  it("a connection looked up once serves the next deliveries without a query", async () => {
    const c = await staticForms();
    const before = await reads();
    for (let n = 0; n < 3; n++) expect((await deliver(c)).status).toBe(202);
    const after = await reads();
    expect([after.database - before.database, after.cache - before.cache]).toEqual([1, 2]);
    expect(await rows(c.connectionId)).toEqual({ receipts: 3, statuses: ["queued", "queued", "queued"] });
  });

  it("a pause made through another API applies to the next delivery: its jobs are held", async () => {
    const c = await staticForms();
    expect((await deliver(c)).status).toBe(202);
    expect((await other.post(`/admin/connections/${c.connectionId}/pause`)).status).toBe(200);
    const before = await reads();
    expect((await deliver(c)).status).toBe(202);
    const after = await reads();
    // The cached row was read, its write found the connection changed, and it was read again.
    expect([after.cache - before.cache, after.database - before.database]).toEqual([1, 1]);
    expect(await rows(c.connectionId)).toEqual({ receipts: 2, statuses: ["queued", "held"] });
  });

  it("a disable written by another process answers 410 at once and writes nothing", async () => {
    const c = await staticForms();
    expect((await deliver(c)).status).toBe(202);
    await app.sql.query("UPDATE connections SET status = 'disabled' WHERE id = $1", [c.connectionId]);
    const refused = await deliver(c);
    expect([refused.status, refused.body.error]).toEqual([410, "connection_disabled"]);
    expect(await rows(c.connectionId)).toEqual({ receipts: 1, statuses: ["queued"] });
  });

  it("a rotation without grace through another API: the old secret is refused at once, the new one accepted", async () => {
    const c = await staticForms();
    expect((await deliver(c)).status).toBe(202);
    const rotated = await other.post(`/admin/connections/${c.connectionId}/rotate-secret`, {
      graceSeconds: 0,
    });
    expect(rotated.status).toBe(200);
    const refused = await deliver(c);
    expect([refused.status, refused.body.error]).toEqual([401, "unauthorized"]);
    expect((await deliver(c, rotated.body.secrets.bearerToken as string)).status).toBe(202);
    expect((await rows(c.connectionId)).receipts).toBe(2);
  });

  it("new tenant defaults set through another API apply to the next delivery's plan", async () => {
    const c = await app.createConnection({
      provider: "thumbtack",
      inboundAuth: { type: "basic" },
      settings: {},
    });
    const negotiation = (id: string) =>
      post(
        `${app.url}/webhooks/thumbtack/${c.connectionId}`,
        {
          event: { eventType: "NegotiationCreatedV4", webhookID: "1", triggeredAt: "2026-04-02T15:20:07Z" },
          data: { negotiationID: id, createdAt: "2026-04-02T15:20:01Z", customer: { firstName: "Ann" } },
        },
        {
          authorization: `Basic ${Buffer.from(`${c.secrets.username}:${c.secrets.password}`).toString("base64")}`,
        },
      );
    expect((await negotiation("neg-1")).status).toBe(202);
    const defaults = { autoResponse: { enabled: true, text: "Hi {{lead.firstName|there}}!" } };
    expect((await other.patch(`/admin/tenants/${c.tenantId}`, { defaults })).status).toBe(200);
    expect((await negotiation("neg-2")).status).toBe(202);
    const { rows: jobs } = await app.sql.query<{ operation: string }>(
      "SELECT operation FROM jobs WHERE connection_id = $1 ORDER BY operation",
      [c.connectionId],
    );
    expect(jobs.map((job) => job.operation)).toEqual(["initial-response", "lead-upsert", "lead-upsert"]);
  });

  it("concurrent deliveries around a pause: each is stored once, and every one sent after the pause is held", async () => {
    const c = await staticForms();
    expect((await deliver(c)).status).toBe(202);
    const burst = (prefix: string) =>
      Promise.all(Array.from({ length: 40 }, (_, n) => deliver(c, undefined, submission(`${prefix}-${n}`))));
    // The first burst races the pause; the second starts after the pause committed.
    const [first] = await Promise.all([
      burst("before"),
      app.sql.query("UPDATE connections SET status = 'paused' WHERE id = $1", [c.connectionId]),
    ]);
    const second = await burst("after");
    expect([...first, ...second].map((answer) => answer.status)).toEqual(Array(80).fill(202));
    const { rows: jobs } = await app.sql.query<{ key: string; status: string }>(
      `SELECT r.event_id AS key, j.status FROM receipts r JOIN jobs j ON j.receipt_id = r.id
       WHERE r.connection_id = $1 AND r.event_id <> ''`,
      [c.connectionId],
    );
    expect(jobs).toHaveLength(81);
    expect(new Set(jobs.map((job) => job.key)).size).toBe(81);
    expect(jobs.filter((job) => job.key.startsWith("after-")).map((job) => job.status)).toEqual(
      Array(40).fill("held"),
    );
  });
});

describe("ingest: a cached connection over its rate limit", () => {
  const app = useApp({ env: { WEBHOOK_RATE_LIMIT: "2" } });

  it("is refused as the connection stored now refuses it (410 once disabled), before the 429", async () => {
    const c = await app.createConnection({ provider: "staticforms", inboundAuth: { type: "bearer" } });
    const deliver = () =>
      post(
        `${app.url}/webhooks/staticforms/${c.connectionId}`,
        { event: "form.submitted", data: { submissionId: randomUUID(), formData: { name: "Ann" } } },
        { authorization: `Bearer ${c.secrets.bearerToken}` },
      );
    expect([(await deliver()).status, (await deliver()).status, (await deliver()).status]).toEqual([
      202, 202, 429,
    ]);
    await app.sql.query("UPDATE connections SET status = 'disabled' WHERE id = $1", [c.connectionId]);
    const refused = await deliver();
    expect([refused.status, refused.body.error]).toEqual([410, "connection_disabled"]);
    const { rows } = await app.sql.query("SELECT count(*)::int AS n FROM receipts WHERE connection_id = $1", [
      c.connectionId,
    ]);
    expect(rows[0].n).toBe(2);
  });
});
