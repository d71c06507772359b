// POST /admin/leads/{id}/mark-replied (api.md "First replies: templates, business hours, speed to
// lead"): the real API and worker, Yelp's API a real HTTP server on loopback that records what it
// received. The lead's first response as its view shows it, the audit entry, and one
// mark_as_replied call to Yelp per lead however often it is marked.
import { randomBytes, randomUUID } from "node:crypto";
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { waitFor } from "../support/wait.js";

const MINUTE = 60_000;

describe("mark-replied", () => {
  const yelp = useFakeServer({ status: 200, body: {} });
  const app = useApp({
    worker: true,
    env: () => ({
      YELP_API_BASE_URL: yelp.url,
      JOB_BACKOFF_BASE_MS: "50",
      DISPATCHER_INTERVAL_MS: "300",
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
    }),
  });

  const connect = (provider: "yelp" | "thumbtack" | "staticforms") =>
    app.createConnection(
      provider === "yelp"
        ? { provider, inboundAuth: { type: "none" }, credentials: { accessToken: "yelp-access-token" } }
        : provider === "thumbtack"
          ? {
              provider,
              inboundAuth: { type: "basic" },
              credentials: { accessToken: "tt-access-token-abcdef", refreshToken: "tt-refresh-token-abcdef" },
            }
          : { provider, inboundAuth: { type: "bearer" } },
    );
  /** A stored lead of the connection, created at the provider `ago` ms before now. */
  const lead = async (c: { tenantId: string; connectionId: string }, provider: string, ago = 10 * MINUTE) => {
    const externalLeadId = `lead-${randomBytes(6).toString("hex")}`;
    const createdAt = new Date(Date.now() - ago);
    const { rows } = await app.sql.query<{ id: string }>(
      `INSERT INTO leads (tenant_id, connection_id, provider, external_lead_id, last_event_at, received_at,
                          provider_created_at, awaits_response)
       VALUES ($1, $2, $3, $4, $5, $5, $5, true) RETURNING id`,
      [c.tenantId, c.connectionId, provider, externalLeadId, createdAt],
    );
    return { id: rows[0]!.id, externalLeadId, createdAt };
  };
  const markPosts = (externalLeadId: string) =>
    yelp.received.filter(
      (request) =>
        request.method === "POST" && request.path === `/v3/leads/${externalLeadId}/mark_as_replied`,
    );
  const writes = async (leadId: string) => ({
    lead: (await app.sql.query("SELECT first_response_at FROM leads WHERE id = $1", [leadId]))
      .rows[0] as unknown,
    audit: Number(
      (
        await app.sql.query(
          "SELECT count(*) FROM audit_entries WHERE action = 'lead.mark_replied' AND target_id = $1",
          [leadId],
        )
      ).rows[0].count,
    ),
    jobs: Number(
      (
        await app.sql.query("SELECT count(*) FROM jobs WHERE job_key = $1", [
          `provider-mark-replied:${leadId}`,
        ])
      ).rows[0].count,
    ),
  });

  it("Yelp: records the business's first response, audits via, and tells Yelp once however often it is marked", async () => {
    const c = await connect("yelp");
    const l = await lead(c, "yelp");
    const at = new Date(Date.now() - 4 * MINUTE);

    const first = await app.operator.post(`/admin/leads/${l.id}/mark-replied`, {
      at: at.toISOString(),
      via: "email",
    });
    expect(first.status).toBe(202);
    expect(first.body.lead).toMatchObject({
      id: l.id,
      firstResponse: { at: at.toISOString(), by: "business", seconds: expect.closeTo(360, 0) },
    });
    // Again, later: the earlier response is kept, and no second job.
    const second = await app.operator.post(`/admin/leads/${l.id}/mark-replied`, { via: "phone" });
    expect(second.status).toBe(202);
    expect(second.body.lead.firstResponse.at).toBe(at.toISOString());

    const [request] = await waitFor(
      () => Promise.resolve(markPosts(l.externalLeadId)),
      (posts) => posts.length > 0,
    );
    expect(request!.headers.authorization).toBe("Bearer yelp-access-token");
    expect(JSON.parse(request!.body)).toEqual({ reply_type: "EMAIL" });
    const job = await waitFor(
      async () =>
        (
          await app.sql.query<{ status: string }>("SELECT status FROM jobs WHERE job_key = $1", [
            `provider-mark-replied:${l.id}`,
          ])
        ).rows,
      (rows) => rows[0]?.status === "succeeded",
    );
    expect(job).toHaveLength(1);
    await app.settled();
    expect(markPosts(l.externalLeadId)).toHaveLength(1);

    const audit = await app.sql.query<{ details: { via: string | null } }>(
      "SELECT details FROM audit_entries WHERE action = 'lead.mark_replied' AND target_id = $1 ORDER BY created_at",
      [l.id],
    );
    expect(audit.rows.map((row) => row.details.via)).toEqual(["email", "phone"]);
  });

  it("keeps an earlier first response (an auto-reply)", async () => {
    const c = await connect("yelp");
    const l = await lead(c, "yelp");
    await app.sql.query(
      `UPDATE leads SET first_response_at = $2, first_response_by = 'auto', first_response_seconds = 60,
                        first_response_business_seconds = 60 WHERE id = $1`,
      [l.id, new Date(l.createdAt.getTime() + MINUTE)],
    );
    const answer = await app.operator.post(`/admin/leads/${l.id}/mark-replied`, {});
    expect(answer.status).toBe(202);
    expect(answer.body.lead.firstResponse).toMatchObject({ by: "auto", seconds: 60 });
  });

  it("Thumbtack and Static Forms leads: the first response is recorded, no provider call, no job", async () => {
    const calls = () => yelp.received.filter((request) => request.path.endsWith("/mark_as_replied")).length;
    await app.settled(); // the earlier tests' calls are made
    const before = calls();
    for (const provider of ["thumbtack", "staticforms"] as const) {
      const c = await connect(provider);
      const l = await lead(c, provider);
      const answer = await app.operator.post(`/admin/leads/${l.id}/mark-replied`, { via: "other" });
      expect(answer.status).toBe(202);
      expect(answer.body.lead.firstResponse).toMatchObject({ by: "business" });
      expect(await writes(l.id)).toMatchObject({ audit: 1, jobs: 0 });
    }
    await app.settled();
    expect(calls()).toBe(before);
  });

  it("refuses bad input with 400 validation_failed naming the field, an unknown or foreign lead with 404: nothing written", async () => {
    const c = await connect("yelp");
    const l = await lead(c, "yelp", 10 * MINUTE);
    const refusals: [unknown, string][] = [
      [{ via: "sms" }, "via"],
      [{ via: 3 }, "via"],
      [{ at: "yesterday" }, "at"],
      [{ at: 12 }, "at"],
      [{ at: new Date(Date.now() + 10 * MINUTE).toISOString() }, "at"],
      [{ at: new Date(l.createdAt.getTime() - MINUTE).toISOString() }, "at"],
    ];
    for (const [body, field] of refusals) {
      const answer = await app.operator.post(`/admin/leads/${l.id}/mark-replied`, body);
      expect({ body, status: answer.status, code: answer.body.error }).toEqual({
        body,
        status: 400,
        code: "validation_failed",
      });
      expect(answer.text).toContain(field);
    }
    const other = await createTenant(app.url);
    expect((await other.admin.post(`/admin/leads/${l.id}/mark-replied`, {})).status).toBe(404);
    expect((await app.operator.post(`/admin/leads/${randomUUID()}/mark-replied`, {})).status).toBe(404);
    expect((await app.operator.post(`/admin/leads/not-a-uuid/mark-replied`, {})).status).toBe(404);
    expect(await writes(l.id)).toEqual({ lead: { first_response_at: null }, audit: 0, jobs: 0 });
  });

  it("is one transaction: when the job cannot be written, neither the response nor the audit entry is", async () => {
    const c = await connect("yelp");
    const l = await lead(c, "yelp");
    // A real failure inside Postgres, in this test file's own database: the job insert is refused.
    await app.sql.query(`CREATE FUNCTION refuse_mark_job() RETURNS trigger LANGUAGE plpgsql AS
      $$ BEGIN RAISE EXCEPTION 'refused by the test' USING ERRCODE = 'P0001'; END $$`);
    await app.sql.query(`CREATE TRIGGER refuse_mark_job BEFORE INSERT ON jobs FOR EACH ROW
      WHEN (NEW.operation = 'provider-mark-replied') EXECUTE FUNCTION refuse_mark_job()`);
    try {
      const answer = await app.operator.post(`/admin/leads/${l.id}/mark-replied`, { via: "phone" });
      expect(answer.status).toBe(500);
      expect(await writes(l.id)).toEqual({ lead: { first_response_at: null }, audit: 0, jobs: 0 });
    } finally {
      await app.sql.query("DROP TRIGGER refuse_mark_job ON jobs");
      await app.sql.query("DROP FUNCTION refuse_mark_job()");
    }
    // Once the fault is gone, the same call records all three.
    expect((await app.operator.post(`/admin/leads/${l.id}/mark-replied`, { via: "phone" })).status).toBe(202);
    expect(await writes(l.id)).toMatchObject({ audit: 1, jobs: 1 });
  });
});
