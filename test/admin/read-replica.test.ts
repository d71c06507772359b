// DATABASE_REPLICA_URL (api.md "Running") against a real streaming replica of a private primary on
// loopback: admin lists and reports read the replica (seen by pausing its WAL replay: a row written
// on the primary is missing from a list until replay resumes), the caller's own write sends its
// lists to the primary for 5 s, detail views always read the primary, and a replica that is down
// costs nothing but a fallback to the primary.
import { randomBytes } from "node:crypto";
import { type Admin, adminAs, createTenant, OPERATOR_KEY, staticFormsDelivery } from "../support/admin.js";
import { type RunningApi, startApi, testConfig } from "../support/app.js";
import { callWithCookie, signedInUser } from "../support/console.js";
import { post } from "../support/http.js";
import { type PostgresWithReplica, startPostgresWithReplica } from "../support/postgres-replica.js";
import { freePort } from "../support/process.js";
import { deadRedisEnv } from "../support/redis.js";
import { waitFor } from "../support/wait.js";

describe("admin API: lists and reports on a read replica", () => {
  let pg: PostgresWithReplica;
  let api: RunningApi;
  let tenantId: string;
  let connectionId: string;
  let bearerToken: string;
  /** A tenant-admin key that never writes: it always reads the replica. */
  let reader: Admin & { key: string };
  /** Another key of the same tenant: the one that writes. */
  let writer: Admin;

  beforeAll(async () => {
    pg = await startPostgresWithReplica();
    api = await startApi(
      testConfig(pg.primaryUrl, {
        DATABASE_REPLICA_URL: pg.replicaUrl,
        LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
        TRUST_PROXY: "127.0.0.1", // the console helper signs in from its own X-Forwarded-For
      }),
    );
    // Every setup write is the operator's: neither tenant key has written.
    const tenant = await createTenant(api.url);
    tenantId = tenant.tenantId;
    reader = { ...tenant.admin, key: tenant.key };
    const operator = adminAs(api.url, OPERATOR_KEY);
    const key = await operator.post("/admin/api-keys", { tenantId, name: "writer", role: "tenant-admin" });
    expect(key.status).toBe(201);
    writer = adminAs(api.url, key.body.key as string);
    const connection = await operator.post("/admin/connections", {
      tenantId,
      provider: "staticforms",
      externalAccountId: `form-${randomBytes(4).toString("hex")}`,
      displayName: "Contact form",
      inboundAuth: { type: "bearer" },
    });
    expect(connection.status).toBe(201);
    connectionId = connection.body.connection.id as string;
    bearerToken = connection.body.secrets.bearerToken as string;
    await pg.caughtUp();
  }, 60_000);

  // A failed test leaves no paused replay behind for the next (a stopped replica refuses: ignored).
  afterEach(() => pg.resumeReplay().catch(() => undefined));

  afterAll(async () => {
    await api?.close();
    await pg?.stop();
  });

  /** A lead written on the primary with SQL (not through the API), answered by the business in 60 s. */
  async function leadOnPrimary(): Promise<string> {
    const { rows } = await pg.primary.query<{ id: string }>(
      `INSERT INTO leads (tenant_id, connection_id, provider, external_lead_id, name, last_event_at,
                          provider_created_at, first_response_at, first_response_by, first_response_seconds)
       VALUES ($1, $2, 'staticforms', $3, 'Replica Test', now(), now(), now(), 'business', 60)
       RETURNING id`,
      [tenantId, connectionId, `lead-${randomBytes(4).toString("hex")}`],
    );
    return rows[0]!.id;
  }
  const leadIds = async (admin: Admin) => {
    const answer = await admin.get("/admin/leads?limit=100");
    expect(answer.status).toBe(200);
    return (answer.body.items as { id: string }[]).map((lead) => lead.id);
  };
  const metric = async (name: string) => {
    const text = await (await fetch(`${api.url}/metrics`)).text();
    const sample = new RegExp(`^${name} (\\S+)$`, "m").exec(text);
    return sample ? Number(sample[1] === "+Inf" ? Infinity : sample[1]) : undefined;
  };
  const onPrimary = async (sql: string, params: unknown[]) => (await pg.primary.query(sql, params)).rowCount;

  it("a list read by a key that has not written shows the replica's data: a row replay has not applied is missing until it resumes", async () => {
    await pg.pauseReplay();
    const leadId = await leadOnPrimary();
    const delivered = await post(`${api.url}/webhooks/staticforms/${connectionId}`, staticFormsDelivery(), {
      authorization: `Bearer ${bearerToken}`,
    });
    expect(delivered.status).toBe(202);
    const receiptId = delivered.body.receiptIds[0]!;
    expect(await onPrimary("SELECT 1 FROM leads WHERE id = $1", [leadId])).toBe(1);
    expect(await onPrimary("SELECT 1 FROM receipts WHERE id = $1", [receiptId])).toBe(1);
    expect(await onPrimary("SELECT 1 FROM jobs WHERE receipt_id = $1", [receiptId])).toBeGreaterThan(0);

    const stale = {
      leads: await leadIds(reader),
      receipts: (await reader.get("/admin/receipts")).body.items.map((row: { id: string }) => row.id),
      jobs: (await reader.get(`/admin/jobs?receiptId=${receiptId}`)).body.items,
      summary: (await reader.get("/admin/jobs/summary?status=queued")).body.groups,
      overview: (await reader.get("/admin/overview")).body,
      speed: (await reader.get("/admin/speed-to-lead")).body.overall,
    };
    expect(stale.leads).not.toContain(leadId);
    expect(stale.receipts).not.toContain(receiptId);
    expect(stale.jobs).toEqual([]);
    expect(stale.summary).toEqual([]);
    expect(stale.overview).toMatchObject({ leads24h: 0, receipts24h: 0 });
    expect(stale.speed).toMatchObject({ leads: 0 });
    // The replica has received the WAL it does not apply: it reports itself behind.
    await waitFor(
      () => metric("leadgate_replica_lag_seconds"),
      (lag) => lag !== undefined && lag > 0,
    );

    // A detail view reads the primary although replay is paused.
    const lead = await reader.get(`/admin/leads/${leadId}`);
    expect(lead.status).toBe(200);
    expect(lead.body).toMatchObject({ id: leadId, name: "Replica Test" });
    const receipt = await reader.get(`/admin/receipts/${receiptId}`);
    expect(receipt.status).toBe(200);
    expect(receipt.body.jobs.length).toBeGreaterThan(0);
    const jobId = receipt.body.jobs[0].id as string;
    expect((await reader.get(`/admin/jobs/${jobId}`)).status).toBe(200);

    await pg.resumeReplay();
    expect(await leadIds(reader)).toContain(leadId);
    expect((await reader.get("/admin/receipts")).body.items.map((row: { id: string }) => row.id)).toContain(
      receiptId,
    );
    expect(
      (await reader.get(`/admin/jobs?receiptId=${receiptId}`)).body.items.map(
        (job: { id: string }) => job.id,
      ),
    ).toContain(jobId);
    expect((await reader.get("/admin/jobs/summary?status=queued")).body.groups).not.toEqual([]);
    expect((await reader.get("/admin/overview")).body).toMatchObject({ leads24h: 1, receipts24h: 1 });
    expect((await reader.get("/admin/speed-to-lead")).body.overall).toMatchObject({ leads: 1 });
    // Caught up: the lag falls back to 0 (the workers still write on the primary, so a scrape may
    // land while the replica applies WAL it has just received).
    await waitFor(
      () => metric("leadgate_replica_lag_seconds"),
      (lag) => lag === 0,
    );
  });

  it("for 5 s after a key's write its own lists read the primary; another key of the tenant still reads the replica", async () => {
    await pg.pauseReplay();
    const leadId = await leadOnPrimary();
    const renamed = await writer.patch(`/admin/connections/${connectionId}`, { displayName: "Renamed form" });
    expect(renamed.status).toBe(200);

    expect(await leadIds(writer)).toContain(leadId);
    expect((await writer.get("/admin/overview")).body).toMatchObject({ leads24h: 2 });
    expect(await leadIds(reader)).not.toContain(leadId);
    expect((await reader.get("/admin/overview")).body).toMatchObject({ leads24h: 1 });

    // Past the 5 s the writer reads the replica again.
    await new Promise((resolve) => setTimeout(resolve, 5_200));
    expect(await leadIds(writer)).not.toContain(leadId);
    await pg.resumeReplay();
    expect(await leadIds(writer)).toContain(leadId);
  });

  it("a refused change marks nothing: the key keeps reading the replica", async () => {
    await pg.pauseReplay();
    const leadId = await leadOnPrimary();
    const refused = await writer.patch(`/admin/connections/${connectionId}`, { displayName: "" });
    expect(refused.status).toBe(400);
    expect(await leadIds(writer)).not.toContain(leadId);
    await pg.resumeReplay();
  });

  it("a console session's write sends that user's lists to the primary; the tenant's key still reads the replica", async () => {
    const user = await signedInUser(api.url, { role: "tenant-admin", tenantId }); // the operator invites
    await pg.caughtUp();
    await pg.pauseReplay();
    const leadId = await leadOnPrimary();
    const sessionLeads = async () =>
      ((await user.get("/admin/leads?limit=100")).body.items as { id: string }[]).map((lead) => lead.id);
    expect(await sessionLeads()).not.toContain(leadId);
    const renamed = await callWithCookie(
      api.url,
      user.cookie,
      "PATCH",
      `/admin/connections/${connectionId}`,
      {
        csrf: user.csrf,
        body: { displayName: "Renamed in the console" },
      },
    );
    expect(renamed.status).toBe(200);
    expect(await sessionLeads()).toContain(leadId);
    expect(await leadIds(reader)).not.toContain(leadId);
  });

  it("while Redis does not answer (no write can be told apart), lists read the primary", async () => {
    const blind = await startApi(
      testConfig(pg.primaryUrl, { DATABASE_REPLICA_URL: pg.replicaUrl, ...deadRedisEnv(await freePort()) }),
    );
    try {
      await pg.pauseReplay();
      const leadId = await leadOnPrimary();
      expect(await leadIds(adminAs(blind.url, reader.key))).toContain(leadId);
      expect(await leadIds(reader)).not.toContain(leadId); // the API with Redis still reads the replica
    } finally {
      await blind.close();
      await pg.resumeReplay();
    }
  });

  it("with replication broken (the replica answers, its WAL receiver does not stream), the lag shows how old its data is, never 0", async () => {
    const mend = await pg.breakReplication();
    try {
      await leadOnPrimary(); // a transaction the replica cannot receive
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      // Received and replayed WAL agree (nothing new arrives): only the receiver's state tells.
      expect(await metric("leadgate_replica_lag_seconds")).toBeGreaterThan(1);
    } finally {
      await mend();
    }
    await waitFor(
      () => metric("leadgate_replica_lag_seconds"),
      (lag) => lag === 0,
    );
  });

  it("with the replica down, lists and reports still answer 200 from the primary, and the fallback is counted", async () => {
    const leadId = await leadOnPrimary();
    await pg.stopReplica();
    expect(await leadIds(reader)).toContain(leadId);
    expect((await reader.get("/admin/receipts")).status).toBe(200);
    expect((await reader.get("/admin/jobs")).status).toBe(200);
    expect((await reader.get("/admin/jobs/summary")).status).toBe(200);
    expect((await reader.get("/admin/overview")).body).toMatchObject({ leads24h: 7 });
    expect((await reader.get("/admin/speed-to-lead")).status).toBe(200);
    // One failure, then this process reads the primary for 10 s without trying the replica.
    expect(await metric("leadgate_replica_fallbacks_total")).toBe(1);
    expect(await metric("leadgate_replica_lag_seconds")).toBe(Infinity); // never a false 0
  });
});
