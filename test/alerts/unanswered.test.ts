// lead.unanswered (api.md "First replies: templates, business hours, speed to lead"): the real
// worker's sweep, run at the times the test chooses, over leads written as the worker leaves them
// (awaits_response set at creation), and once end to end (webhooks to the real API and worker,
// Thumbtack's API on loopback); the alerts as GET /admin/alerts shows them.
import { randomBytes } from "node:crypto";
import { SWEEP_LOCK, UnansweredSweep } from "../../src/alerts/unanswered-sweep.js";
import { FirstResponses } from "../../src/leads/first-responses.js";
import { OPERATOR_KEY } from "../support/admin.js";
import { fixture } from "../support/fixtures.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { post } from "../support/http.js";
import { waitFor } from "../support/wait.js";

const SECOND = 1000;
const ALWAYS_CLOSED = { timezone: "America/New_York", weekly: {} };

describe("alerts: lead.unanswered (the unanswered-lead sweep)", () => {
  // Thumbtack's API on loopback: the lead has no messages yet (the check before a reply).
  const thumbtack = useFakeServer({ status: 201, body: {} }, (request) =>
    request.method === "GET" ? { status: 200, body: { messages: [] } } : undefined,
  );
  // The sweep's own timer is far off: each test runs it at the "now" it chooses.
  const app = useApp({
    worker: true,
    env: () => ({
      LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY,
      UNANSWERED_SWEEP_SECONDS: "3600",
      THUMBTACK_API_BASE_URL: thumbtack.url,
      JOB_BACKOFF_BASE_MS: "50",
      DISPATCHER_INTERVAL_MS: "300",
    }),
  });
  const sweep = () => app.worker.get(UnansweredSweep);

  const connect = (settings: object) =>
    app.createConnection({
      provider: "thumbtack",
      displayName: "Acme Roofing",
      inboundAuth: { type: "basic" },
      credentials: { accessToken: "tt-access-token-abcdef", refreshToken: "tt-refresh-token-abcdef" },
      settings,
    });
  /** A lead of the connection created at the provider at `createdAt`. */
  const lead = async (
    c: { tenantId: string; connectionId: string },
    createdAt: Date,
    awaitsResponse = true,
  ): Promise<string> => {
    const { rows } = await app.sql.query<{ id: string }>(
      `INSERT INTO leads (tenant_id, connection_id, provider, external_lead_id, last_event_at, received_at,
                          provider_created_at, awaits_response)
       VALUES ($1, $2, 'thumbtack', $3, $4, $4, $4, $5) RETURNING id`,
      [c.tenantId, c.connectionId, `lead-${randomBytes(6).toString("hex")}`, createdAt, awaitsResponse],
    );
    return rows[0]!.id;
  };
  const alerts = async (connectionId: string) =>
    (await app.operator.get(`/admin/alerts?type=lead.unanswered&connectionId=${connectionId}`)).body
      .items as { id: string; status: string; count: number; summary: string }[];

  it("a lead past its target unanswered raises one alert per connection; a first response resolves it", async () => {
    const c = await connect({ responseTarget: { seconds: 1 } });
    const now = new Date();
    const first = await lead(c, new Date(now.getTime() - 10 * SECOND));
    const second = await lead(c, new Date(now.getTime() - 20 * SECOND));

    const found = await sweep().run(now);
    expect(found.unanswered.get(c.connectionId)).toBe(2);
    expect(await alerts(c.connectionId)).toEqual([
      expect.objectContaining({ status: "open", count: 2, summary: expect.stringContaining("2 leads") }),
    ]);

    // A third past target meanwhile: the same alert, its count raised to the leads past target now.
    const third = await lead(c, new Date(now.getTime() - 5 * SECOND));
    await sweep().run(new Date(now.getTime() + 2 * SECOND));
    expect(await alerts(c.connectionId)).toEqual([
      expect.objectContaining({ status: "open", count: 3, summary: expect.stringContaining("3 leads") }),
    ]);

    // One answered: the same alert, restated with the ones left; its count never falls.
    await app.worker.get(FirstResponses).record(c.tenantId, first, { at: new Date(), by: "business" }, null);
    await sweep().run(new Date(now.getTime() + 5 * SECOND));
    expect(await alerts(c.connectionId)).toEqual([
      expect.objectContaining({ status: "open", count: 3, summary: expect.stringContaining("2 leads past") }),
    ]);

    // All answered: resolved.
    await app.worker.get(FirstResponses).record(c.tenantId, second, { at: new Date(), by: "auto" }, null);
    await app.worker.get(FirstResponses).record(c.tenantId, third, { at: new Date(), by: "auto" }, null);
    const after = await sweep().run(new Date(now.getTime() + 10 * SECOND));
    expect(after.unanswered.has(c.connectionId)).toBe(false);
    expect(after.resolved).toBe(1);
    expect(await alerts(c.connectionId)).toEqual([expect.objectContaining({ status: "resolved" })]);
  });

  it("one sweep at a time across workers: a sweep finding another running skips; two at once count the leads once", async () => {
    const c = await connect({ responseTarget: { seconds: 1 } });
    const now = new Date();
    for (const ago of [10, 20, 30]) await lead(c, new Date(now.getTime() - ago * SECOND));

    // Another worker's sweep holds the lock: this one skips, and raises nothing.
    const holder = await app.sql.connect();
    await holder.query("SELECT pg_advisory_lock($1)", [SWEEP_LOCK]);
    try {
      expect(await sweep().run(now)).toMatchObject({ skipped: true, resolved: 0 });
      expect(await alerts(c.connectionId)).toEqual([]);
    } finally {
      await holder.query("SELECT pg_advisory_unlock($1)", [SWEEP_LOCK]);
      holder.release();
    }

    // Two workers' sweeps at once: one alert, its leads counted once.
    const other = await app.startWorker({ UNANSWERED_SWEEP_SECONDS: "3600" });
    await Promise.all([sweep().run(now), other.get(UnansweredSweep).run(now)]);
    expect(await alerts(c.connectionId)).toEqual([
      expect.objectContaining({ status: "open", count: 3, summary: expect.stringContaining("3 leads") }),
    ]);
  });

  it("re-opened within 10 minutes, the alert counts the leads past target now, not added to its earlier count", async () => {
    const c = await connect({ responseTarget: { seconds: 1 } });
    const now = new Date();
    const earlier = [10, 20, 30].map((ago) => lead(c, new Date(now.getTime() - ago * SECOND)));
    const ids = await Promise.all(earlier);
    await sweep().run(now);
    const [opened] = await alerts(c.connectionId);
    expect(opened).toMatchObject({ status: "open", count: 3 });
    for (const id of ids) {
      await app.worker.get(FirstResponses).record(c.tenantId, id, { at: new Date(), by: "business" }, null);
    }
    expect((await sweep().run(new Date(now.getTime() + SECOND))).resolved).toBe(1);

    await lead(c, new Date(now.getTime() - 5 * SECOND));
    await sweep().run(new Date(now.getTime() + 2 * SECOND));
    expect(await alerts(c.connectionId)).toEqual([
      expect.objectContaining({
        id: opened!.id,
        status: "open",
        count: 1,
        summary: expect.stringContaining("1 lead past"),
      }),
    ]);
  });

  it("raises nothing for a lead within its target, one not awaiting a response, or one older than the bound", async () => {
    const within = await connect({ responseTarget: { seconds: 3600 } });
    const notAwaiting = await connect({ responseTarget: { seconds: 1 } });
    const old = await connect({ responseTarget: { seconds: 1 } });
    const now = new Date();
    await lead(within, new Date(now.getTime() - 60 * SECOND));
    await lead(notAwaiting, new Date(now.getTime() - 60 * SECOND), false);
    await lead(old, new Date(now.getTime() - 8 * 86_400 * SECOND));

    const found = await sweep().run(now);
    for (const c of [within, notAwaiting, old]) {
      expect(found.unanswered.has(c.connectionId)).toBe(false);
      expect(await alerts(c.connectionId)).toEqual([]);
    }
    // The default target (300 s) of a connection that sets none counts too: past it, an alert.
    const byDefault = await connect({});
    await lead(byDefault, new Date(now.getTime() - 200 * SECOND));
    expect((await sweep().run(now)).unanswered.has(byDefault.connectionId)).toBe(false);
    expect(
      (await sweep().run(new Date(now.getTime() + 200 * SECOND))).unanswered.get(byDefault.connectionId),
    ).toBe(1);
  });

  it("counts on the business clock: a connection closed all week raises nothing", async () => {
    const closed = await connect({ responseTarget: { seconds: 1 }, businessHours: ALWAYS_CLOSED });
    const now = new Date();
    await lead(closed, new Date(now.getTime() - 3600 * SECOND));
    const found = await sweep().run(now);
    expect(found.unanswered.has(closed.connectionId)).toBe(false);
    expect(await alerts(closed.connectionId)).toEqual([]);
  });

  it("end to end: a Thumbtack lead by webhook, nobody answers, the alert opens; the business's message by webhook resolves it", async () => {
    const c = await app.createConnection({
      provider: "thumbtack",
      externalAccountId: "700000000000000404",
      displayName: "Evergreen Deck & Fence",
      inboundAuth: { type: "basic" },
      credentials: { accessToken: "tt-access-token-abcdef", refreshToken: "tt-refresh-token-abcdef" },
      settings: { responseTarget: { seconds: 60 } }, // no autoResponse: nobody replies for the business
    });
    const basic = `Basic ${Buffer.from(`${c.secrets.username}:${c.secrets.password}`).toString("base64")}`;
    const deliver = async (body: unknown) =>
      expect(
        (
          await post(`${app.url}/webhooks/thumbtack/${c.connectionId}`, JSON.stringify(body), {
            authorization: basic,
          })
        ).status,
      ).toBe(202);
    const created = new Date(Date.now() - 120 * SECOND); // a fresh lead, two minutes old
    const negotiation = fixture("thumbtack/negotiation-created-v4.json").json as {
      data: Record<string, unknown>;
    };
    negotiation.data.createdAt = created.toISOString();
    await deliver(negotiation);
    const awaiting = await waitFor(
      async () =>
        (
          await app.sql.query<{ awaits_response: boolean; first_response_at: Date | null }>(
            "SELECT awaits_response, first_response_at FROM leads WHERE connection_id = $1",
            [c.connectionId],
          )
        ).rows,
      (rows) => rows.length === 1,
    );
    expect(awaiting).toEqual([{ awaits_response: true, first_response_at: null }]);

    await sweep().run(new Date());
    expect(await alerts(c.connectionId)).toEqual([
      expect.objectContaining({ status: "open", summary: expect.stringContaining("1 lead past") }),
    ]);

    const message = fixture("thumbtack/message-created-v4-business.json").json as {
      data: Record<string, unknown>;
    };
    const sentAt = new Date(Date.now() - 30 * SECOND);
    message.data.sentAt = sentAt.toISOString();
    await deliver(message);
    const answered = await waitFor(
      async () =>
        (
          await app.sql.query<{ first_response_at: Date | null; first_response_by: string | null }>(
            "SELECT first_response_at, first_response_by FROM leads WHERE connection_id = $1",
            [c.connectionId],
          )
        ).rows[0],
      (row) => row?.first_response_at !== null,
    );
    expect(answered).toEqual({ first_response_at: sentAt, first_response_by: "business" });

    const after = await sweep().run(new Date());
    expect(after.unanswered.has(c.connectionId)).toBe(false);
    expect(await alerts(c.connectionId)).toEqual([expect.objectContaining({ status: "resolved" })]);
  });
});
