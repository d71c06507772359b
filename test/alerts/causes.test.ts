// The other causes, each through the real code that records it (and raises its alert in the same
// transaction): a CRM destination's circuit opening and closing (CircuitBreaker), a payload
// conflict (ingest), waits that expire and the replay that recovers them (the job state machine),
// a credential error (the store's refuseCredentials, as the job runner asks it) and the resume that ends it.
import { PLATFORM } from "../../src/auth/principal.js";
import { CircuitBreaker, originOf } from "../../src/common/outbound/circuit-breaker.js";
import { RetryableError } from "../../src/common/outbound/errors.js";
import { ConnectionStore } from "../../src/connections/connection-store.js";
import { PrismaService } from "../../src/database/prisma.service.js";
import { CONTEXT_COLUMNS, type ContextRow } from "../../src/jobs/job-context.js";
import { JobStateMachine } from "../../src/jobs/state/job-state-machine.js";
import { createTenant, OPERATOR_KEY, staticFormsDelivery } from "../support/admin.js";
import { useApp } from "../support/harness.js";
import { post } from "../support/http.js";

describe("alerts: their causes", () => {
  const app = useApp({
    worker: true,
    env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY, CIRCUIT_FAILURE_THRESHOLD: "3" },
  });
  const alertsOf = async (connectionId: string) =>
    (
      await app.sql.query<{ type: string; status: string; count: number; summary: string }>(
        "SELECT type, status, count, summary FROM alerts WHERE connection_id = $1 ORDER BY first_seen_at",
        [connectionId],
      )
    ).rows;
  const connect = async (admin: Awaited<ReturnType<typeof createTenant>>["admin"], crmUrl: string) => {
    const created = await admin.post("/admin/connections", {
      provider: "staticforms",
      externalAccountId: `form-${Math.random().toString(36).slice(2)}`,
      displayName: "Contact form",
      inboundAuth: { type: "bearer" },
      settings: { crmDestination: { url: crmUrl } },
    });
    expect(created.status).toBe(201);
    return { id: created.body.connection.id as string, token: created.body.secrets.bearerToken as string };
  };

  it("destination.failing: a circuit opening raises it for every connection on that CRM origin; the probe that closes it resolves them", async () => {
    const a = await createTenant(app.url);
    const b = await createTenant(app.url);
    const crm = "http://127.0.0.1:9";
    const first = await connect(a.admin, `${crm}/crm/a`);
    const second = await connect(b.admin, `${crm}/crm/b`);
    const elsewhere = await connect(a.admin, "http://127.0.0.1:10/crm");
    const circuits = app.worker.get(CircuitBreaker);
    const origin = originOf(`${crm}/crm/a`);
    for (let n = 0; n < 3; n++) await circuits.failed(origin, new RetryableError("http_503"));
    for (const connection of [first, second]) {
      const [alert] = await alertsOf(connection.id);
      expect(alert).toMatchObject({ type: "destination.failing", status: "open", count: 1 });
      expect(alert!.summary).toContain(origin);
    }
    expect(await alertsOf(elsewhere.id)).toEqual([]);
    expect(await circuits.succeeded(origin)).toBe(true);
    for (const connection of [first, second]) {
      expect((await alertsOf(connection.id)).map((alert) => alert.status)).toEqual(["resolved"]);
    }
    // Opened again within 10 minutes of its resolution: the same alert re-opens.
    for (let n = 0; n < 3; n++) await circuits.failed(origin, new RetryableError("timeout"));
    expect((await alertsOf(first.id)).map((alert) => [alert.status, alert.count])).toEqual([["open", 2]]);
    // Resolved 11 minutes ago, then opened again: a new alert.
    expect(await circuits.succeeded(origin)).toBe(true);
    await app.sql.query(
      "UPDATE alerts SET resolved_at = now() - interval '11 minutes' WHERE connection_id = $1",
      [first.id],
    );
    for (let n = 0; n < 3; n++) await circuits.failed(origin, new RetryableError("timeout"));
    expect((await alertsOf(first.id)).map((alert) => alert.status)).toEqual(["resolved", "open"]);
  });

  it("payload.conflict: the same submission with other content opens it; repeats count on it", async () => {
    const tenant = await createTenant(app.url);
    const connection = await connect(tenant.admin, "http://127.0.0.1:9/crm");
    const url = `${app.url}/webhooks/staticforms/${connection.id}`;
    const auth = { authorization: `Bearer ${connection.token}` };
    const delivery = staticFormsDelivery();
    expect((await post(url, delivery, auth)).status).toBe(202);
    expect((await post(url, delivery, auth)).status).toBe(200); // a plain duplicate: no alert
    expect(await alertsOf(connection.id)).toEqual([]);
    for (const name of ["Someone else", "Another one"]) {
      const changed = { ...delivery, data: { ...delivery.data, formData: { name } } };
      expect((await post(url, changed, auth)).status).toBe(200);
    }
    expect(await alertsOf(connection.id)).toEqual([
      expect.objectContaining({ type: "payload.conflict", status: "open", count: 2 }),
    ]);
  });

  it("job.dead: waits that expire count on it (wait_expired); a replay that succeeds resolves it once none is dead; a notification that dies raises nothing", async () => {
    const tenant = await createTenant(app.url);
    const connection = await connect(tenant.admin, "http://127.0.0.1:9/crm");
    const state = app.worker.get(JobStateMachine);
    const { rows: waiting } = await app.sql.query<{ id: string }>(
      `INSERT INTO jobs (tenant_id, connection_id, operation, job_key, status, max_attempts, waiting_for,
                         waiting_since, next_attempt_at)
       SELECT $1::uuid, $2::uuid, 'crm-delivery', 'crm-delivery:expiring-' || g || '-' || $2::text, 'waiting', 8, 'circuit',
              now() - interval '2 days', now() + interval '1 day'
       FROM generate_series(1, 3) g RETURNING id`,
      [tenant.tenantId, connection.id],
    );
    expect(await state.expireWaits(86_400, 100)).toBe(3);
    const [alert] = await alertsOf(connection.id);
    expect(alert).toMatchObject({ type: "job.dead", status: "open", count: 3 });
    expect(alert!.summary).toContain("wait_expired");

    // Two of them replayed and succeeded: one is still dead, the alert stays open; the third resolves it.
    const replayAndSucceed = async (ids: string[]) => {
      await app.worker
        .get(PrismaService)
        .$transaction((tx) => state.replay(tx, PLATFORM, { jobIds: ids }, ["dead"]));
      for (const id of ids) {
        const claimed = await state.claim<ContextRow>(id, CONTEXT_COLUMNS);
        expect(claimed!.job.lastErrorCode).toBe("wait_expired");
        expect(await state.succeed(claimed!.job)).toEqual([]);
      }
    };
    await replayAndSucceed(waiting.slice(0, 2).map((job) => job.id));
    expect((await alertsOf(connection.id)).map((row) => row.status)).toEqual(["open"]);
    await replayAndSucceed([waiting[2]!.id]);
    expect((await alertsOf(connection.id)).map((row) => row.status)).toEqual(["resolved"]);

    const { rows: notification } = await app.sql.query<{ id: string }>(
      `INSERT INTO jobs (tenant_id, alert_id, operation, job_key, status, max_attempts)
       SELECT $1::uuid, id, 'notification', 'notification:self-' || $1::text, 'queued', 8
       FROM alerts WHERE connection_id = $2::uuid RETURNING id`,
      [tenant.tenantId, connection.id],
    );
    const claimed = await state.claim<ContextRow>(notification[0]!.id, CONTEXT_COLUMNS);
    expect(await state.finish(claimed!.job, "die", { outcome: "permanent", errorCode: "http_410" })).toBe(
      true,
    );
    const { rows: raised } = await app.sql.query(
      "SELECT 1 FROM alerts WHERE tenant_id = $1 AND status = 'open'",
      [tenant.tenantId],
    );
    expect(raised).toEqual([]);
  });

  it("connection.credential_error: opened by the status change, resolved by the resume", async () => {
    const tenant = await createTenant(app.url);
    const connection = await connect(tenant.admin, "http://127.0.0.1:9/crm");
    await app.worker.get(ConnectionStore).refuseCredentials({ tenantId: tenant.tenantId, id: connection.id });
    expect(await alertsOf(connection.id)).toEqual([
      expect.objectContaining({ type: "connection.credential_error", status: "open", count: 1 }),
    ]);
    expect((await alertsOf(connection.id))[0]!.summary).toContain("Contact form");
    expect((await tenant.admin.post(`/admin/connections/${connection.id}/resume`)).status).toBe(200);
    expect((await alertsOf(connection.id)).map((alert) => alert.status)).toEqual(["resolved"]);
  });
});
