// GET /admin/speed-to-lead (api.md "First replies: templates, business hours, speed to lead") on a
// known set of leads written with SQL: counts, median and p90 (percentile_cont), the share within
// each connection's effective target, the automatic share, the business clock, the window, Static
// Forms leads counted only once replied, tenant isolation, the day series, every refusal.
import { randomBytes, randomUUID } from "node:crypto";
import { adminAs, createTenant, OPERATOR_KEY } from "../support/admin.js";
import { useApp } from "../support/harness.js";

const FROM = "2026-03-01T00:00:00.000Z";
const TO = "2026-03-03T00:00:00.000Z";
const WINDOW = `from=${FROM}&to=${TO}`;

/** A lead: when the provider created it (null: only created_at), and its first response if any. */
interface Row {
  at: string | null;
  createdAt?: string;
  by?: "auto" | "business";
  seconds?: number;
  business?: number;
}

describe("admin API: speed to lead", () => {
  const app = useApp({ env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY } });
  let a: Awaited<ReturnType<typeof createTenant>>;
  let b: Awaited<ReturnType<typeof createTenant>>;
  let fast: string; // Thumbtack, its own target of 120 s
  let plain: string; // Thumbtack, the default target (300 s)
  let form: string; // Static Forms: no reply channel
  let other: string; // tenant b's

  const thumbtack = async (admin: typeof a.admin, settings?: object) => {
    const answer = await admin.post("/admin/connections", {
      provider: "thumbtack",
      externalAccountId: `7${randomBytes(8).readBigUInt64BE().toString().padStart(17, "0").slice(0, 17)}`,
      displayName: "Acme Roofing",
      inboundAuth: { type: "basic" },
      ...(settings ? { settings } : {}),
    });
    expect(answer.status).toBe(201);
    return answer.body.connection.id as string;
  };

  const insert = async (tenantId: string, connectionId: string, provider: string, rows: Row[]) => {
    for (const row of rows) {
      const created = row.createdAt ?? row.at!;
      await app.sql.query(
        `INSERT INTO leads (tenant_id, connection_id, provider, external_lead_id, last_event_at, created_at,
                            received_at, provider_created_at, first_response_at, first_response_by,
                            first_response_seconds, first_response_business_seconds)
         VALUES ($1, $2, $3, $4, $5::timestamptz, $5::timestamptz, $5::timestamptz, $6::timestamptz,
                 COALESCE($6::timestamptz, $5::timestamptz) + make_interval(secs => $8::float8), $7, $8::float8, $9::float8)`,
        [
          tenantId,
          connectionId,
          provider,
          `lead-${randomBytes(6).toString("hex")}`,
          created,
          row.at,
          row.by ?? null,
          row.seconds ?? null,
          row.business ?? null,
        ],
      );
    }
  };

  beforeAll(async () => {
    a = await createTenant(app.url);
    b = await createTenant(app.url);
    fast = await thumbtack(a.admin, { responseTarget: { seconds: 120 } });
    plain = await thumbtack(a.admin);
    const created = await a.admin.post("/admin/connections", {
      provider: "staticforms",
      externalAccountId: `form-${randomBytes(4).toString("hex")}`,
      displayName: "Contact form",
      inboundAuth: { type: "bearer" },
    });
    expect(created.status).toBe(201);
    form = created.body.connection.id as string;
    other = await thumbtack(b.admin);

    await insert(a.tenantId, fast, "thumbtack", [
      { at: "2026-03-01T10:00:00Z", by: "auto", seconds: 60, business: 60 },
      { at: "2026-03-01T11:00:00Z", by: "business", seconds: 100, business: 40 },
      { at: "2026-03-01T12:00:00Z", by: "auto", seconds: 200, business: 200 },
      { at: "2026-03-02T09:00:00Z", by: "business", seconds: 400, business: 100 },
      { at: "2026-03-02T10:00:00Z" }, // unanswered
      // No provider time: its row's creation stands for it.
      { at: null, createdAt: "2026-03-02T12:00:00Z", by: "auto", seconds: 30, business: 30 },
      // Outside the window [from, to): just before it, and at its end.
      { at: "2026-02-28T23:59:59Z", by: "auto", seconds: 10, business: 10 },
      { at: TO, by: "auto", seconds: 10, business: 10 },
      // Created (row) inside the window, but by the provider before it: the provider's time counts.
      {
        at: "2026-02-20T00:00:00Z",
        createdAt: "2026-03-01T05:00:00Z",
        by: "auto",
        seconds: 10,
        business: 10,
      },
    ]);
    await insert(a.tenantId, plain, "thumbtack", [
      { at: "2026-03-01T08:00:00Z", by: "business", seconds: 250, business: 250 },
      { at: "2026-03-02T08:00:00Z", by: "auto", seconds: 500, business: 500 },
    ]);
    await insert(a.tenantId, form, "staticforms", [
      { at: "2026-03-01T09:00:00Z" }, // never marked replied: not counted at all
      { at: "2026-03-01T13:00:00Z", by: "business", seconds: 900, business: 900 },
    ]);
    const now = Date.now();
    await insert(b.tenantId, other, "thumbtack", [
      { at: "2026-03-01T10:00:00Z", by: "auto", seconds: 5, business: 5 },
      { at: new Date(now - 86_400_000).toISOString(), by: "auto", seconds: 7, business: 7 },
      { at: new Date(now - 31 * 86_400_000).toISOString(), by: "auto", seconds: 9, business: 9 },
    ]);
  });

  const byConnection = (items: { connectionId: string }[]) =>
    Object.fromEntries(items.map((item) => [item.connectionId, item]));

  it("reports each connection and the tenant overall on the wall clock", async () => {
    const answer = await a.admin.get(`/admin/speed-to-lead?${WINDOW}`);
    expect(answer.status).toBe(200);
    expect(answer.body.window).toEqual({ from: FROM, to: TO });
    expect(answer.body.clock).toBe("wall");
    expect(answer.body.series).toBeUndefined();
    expect(answer.body.items).toHaveLength(3);
    const items = byConnection(answer.body.items);
    // fast: 6 leads, answered in 30, 60, 100, 200, 400 s; within 120 s: 3 of the 6.
    expect(items[fast]).toEqual({
      connectionId: fast,
      leads: 6,
      responded: 5,
      unanswered: 1,
      medianSeconds: 100,
      p90Seconds: expect.closeTo(320, 9),
      withinTargetShare: 0.5,
      targetSeconds: 120,
      autoShare: 0.6,
    });
    expect(items[plain]).toEqual({
      connectionId: plain,
      leads: 2,
      responded: 2,
      unanswered: 0,
      medianSeconds: 375,
      p90Seconds: expect.closeTo(475, 9),
      withinTargetShare: 0.5,
      targetSeconds: 300,
      autoShare: 0.5,
    });
    expect(items[form]).toEqual({
      connectionId: form,
      leads: 1,
      responded: 1,
      unanswered: 0,
      medianSeconds: 900,
      p90Seconds: 900,
      withinTargetShare: 0,
      targetSeconds: 300,
      autoShare: 0,
    });
    // 30, 60, 100, 200, 250, 400, 500, 900; within each one's own target: 3 + 1 + 0 of 9.
    expect(answer.body.overall).toEqual({
      leads: 9,
      responded: 8,
      unanswered: 1,
      medianSeconds: 225,
      p90Seconds: expect.closeTo(620, 9),
      withinTargetShare: 4 / 9,
      targetSeconds: null,
      autoShare: 0.5,
    });
  });

  it("the business clock uses the seconds inside business hours", async () => {
    const answer = await a.admin.get(`/admin/speed-to-lead?${WINDOW}&clock=business&connectionId=${fast}`);
    expect(answer.status).toBe(200);
    expect(answer.body.clock).toBe("business");
    // 30, 40, 60, 100, 200; within 120 s: 4 of 6.
    expect(answer.body.items).toEqual([
      {
        connectionId: fast,
        leads: 6,
        responded: 5,
        unanswered: 1,
        medianSeconds: 60,
        p90Seconds: expect.closeTo(160, 9),
        withinTargetShare: 4 / 6,
        targetSeconds: 120,
        autoShare: 0.6,
      },
    ]);
    // With connectionId, overall is that connection's.
    expect(answer.body.overall).toMatchObject({ leads: 6, responded: 5, medianSeconds: 60 });
  });

  it("bucket=day adds one entry per UTC day of the window, overall or for the connection", async () => {
    const overall = await a.admin.get(`/admin/speed-to-lead?${WINDOW}&bucket=day`);
    expect(overall.status).toBe(200);
    // 03-01: 60, 100, 200, 250, 900. 03-02: 30, 400, 500 and one unanswered.
    expect(overall.body.series).toEqual([
      { day: "2026-03-01", leads: 5, medianSeconds: 200, p90Seconds: expect.closeTo(640, 9) },
      { day: "2026-03-02", leads: 4, medianSeconds: 400, p90Seconds: expect.closeTo(480, 9) },
    ]);
    const one = await a.admin.get(`/admin/speed-to-lead?${WINDOW}&bucket=day&connectionId=${fast}`);
    expect(one.body.series).toEqual([
      { day: "2026-03-01", leads: 3, medianSeconds: 100, p90Seconds: expect.closeTo(180, 9) },
      { day: "2026-03-02", leads: 3, medianSeconds: 215, p90Seconds: expect.closeTo(363, 9) },
    ]);
    // A day without leads is still there; a window starting mid-day starts its first day there.
    const empty = await a.admin.get(
      `/admin/speed-to-lead?from=2026-02-28T12:00:00Z&to=2026-03-02T00:00:00Z&bucket=day&connectionId=${plain}`,
    );
    expect(empty.body.series).toEqual([
      { day: "2026-02-28", leads: 0, medianSeconds: null, p90Seconds: null },
      { day: "2026-03-01", leads: 1, medianSeconds: 250, p90Seconds: 250 },
    ]);
  });

  it("a tenant-admin sees only its tenant; an operator sees all or one tenant", async () => {
    const mine = await a.admin.get(`/admin/speed-to-lead?${WINDOW}&tenantId=${b.tenantId}`);
    expect([mine.status, mine.body.items, mine.body.overall.leads]).toEqual([200, [], 0]);
    expect(mine.body.overall).toEqual({
      leads: 0,
      responded: 0,
      unanswered: 0,
      medianSeconds: null,
      p90Seconds: null,
      withinTargetShare: null,
      targetSeconds: null,
      autoShare: null,
    });
    const foreign = await a.admin.get(`/admin/speed-to-lead?${WINDOW}&connectionId=${other}`);
    expect([foreign.status, foreign.body.error]).toEqual([404, "not_found"]);

    const operator = adminAs(app.url, OPERATOR_KEY);
    const all = await operator.get(`/admin/speed-to-lead?${WINDOW}`);
    expect(all.body.items).toHaveLength(4);
    expect(all.body.overall).toMatchObject({ leads: 10, responded: 9, unanswered: 1 });
    const onlyB = await operator.get(`/admin/speed-to-lead?${WINDOW}&tenantId=${b.tenantId}`);
    expect(onlyB.body.items).toEqual([
      expect.objectContaining({ connectionId: other, leads: 1, medianSeconds: 5, withinTargetShare: 1 }),
    ]);
    const theirs = await operator.get(`/admin/speed-to-lead?${WINDOW}&connectionId=${other}`);
    expect(theirs.body.items).toEqual([expect.objectContaining({ connectionId: other, leads: 1 })]);
    const mismatch = await operator.get(
      `/admin/speed-to-lead?${WINDOW}&connectionId=${other}&tenantId=${a.tenantId}`,
    );
    expect(mismatch.status).toBe(404);
  });

  it("defaults to the last 30 days on the wall clock", async () => {
    const before = Date.now();
    const answer = await b.admin.get("/admin/speed-to-lead");
    expect(answer.status).toBe(200);
    const to = Date.parse(answer.body.window.to);
    expect(to).toBeGreaterThanOrEqual(before - 1000);
    expect(to).toBeLessThanOrEqual(Date.now());
    expect(to - Date.parse(answer.body.window.from)).toBe(30 * 86_400_000);
    expect(answer.body.clock).toBe("wall");
    expect(answer.body.overall).toMatchObject({ leads: 1, medianSeconds: 7 });
  });

  it("refuses bad input with 400 validation_failed naming the field", async () => {
    const bad: [string, string][] = [
      ["connectionId=nope", "connectionId"],
      ["tenantId=nope", "tenantId"],
      ["from=yesterday", "from"],
      ["to=2026-13-45", "to"],
      [`from=${TO}&to=${FROM}`, "from"],
      [`from=${FROM}&to=${FROM}`, "from"],
      ["from=2025-01-01T00:00:00Z&to=2026-01-03T00:00:00Z", "to"],
      ["clock=solar", "clock"],
      ["bucket=week", "bucket"],
      ["limit=5", "limit"],
    ];
    for (const [query, field] of bad) {
      const answer = await a.admin.get(`/admin/speed-to-lead?${query}`);
      expect([query, answer.status, answer.body.error, Object.keys(answer.body.details ?? {})]).toEqual([
        query,
        400,
        "validation_failed",
        [field],
      ]);
    }
    const unknown = await a.admin.get(`/admin/speed-to-lead?connectionId=${randomUUID()}`);
    expect([unknown.status, unknown.body.error]).toEqual([404, "not_found"]);
    const anonymous = await adminAs(app.url, undefined).get("/admin/speed-to-lead");
    expect(anonymous.status).toBe(401);
  });
});
