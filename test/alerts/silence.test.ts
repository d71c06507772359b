// connection.silent with a controllable clock: receipts written at chosen times, the sweep run at
// chosen "nows". Nothing sleeps: the rule reads the clock it is given.
import { randomBytes } from "node:crypto";
import { SilenceSweep } from "../../src/alerts/silence-sweep.js";
import { OPERATOR_KEY } from "../support/admin.js";
import { useApp } from "../support/harness.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe("alerts: connection.silent (the silence sweep)", () => {
  const app = useApp({ worker: true, env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY } });
  const sweep = () => app.worker.get(SilenceSweep);
  const start = new Date("2026-06-01T08:00:00Z");
  const at = (ms: number) => new Date(start.getTime() + ms);

  /** Receipts of the connection at these times (what deliveries leave behind). */
  const received = async (tenantId: string, connectionId: string, times: Date[]) => {
    for (const time of times) {
      await app.sql.query(
        `INSERT INTO receipts (tenant_id, connection_id, provider, account_id, idempotency_key, lead_id, kind, status,
                               occurred_at, payload_digest, received_at)
         VALUES ($1, $2, 'staticforms', 'acct', $3, 'lead', 'lead.created', 'accepted', $4, 'digest', $4)`,
        [tenantId, connectionId, randomBytes(16).toString("hex"), time],
      );
    }
  };
  const silentAlerts = async (connectionId: string) =>
    (
      await app.sql.query<{ status: string; count: number }>(
        "SELECT status, count FROM alerts WHERE connection_id = $1 AND type = 'connection.silent' ORDER BY first_seen_at",
        [connectionId],
      )
    ).rows;

  it("learns each connection's usual gap: a busy one is silent after hours, a slow one not before days", async () => {
    const busy = await app.createConnection({ provider: "staticforms", inboundAuth: { type: "bearer" } });
    const slow = await app.createConnection({ provider: "staticforms", inboundAuth: { type: "bearer" } });
    const fresh = await app.createConnection({ provider: "staticforms", inboundAuth: { type: "bearer" } });
    // Busy: a delivery every 10 minutes for 8 hours. Slow: one a day for 20 days. Fresh: 5 deliveries.
    await received(
      busy.tenantId,
      busy.connectionId,
      Array.from({ length: 49 }, (_, n) => at(n * 10 * MINUTE)),
    );
    await received(
      slow.tenantId,
      slow.connectionId,
      Array.from({ length: 20 }, (_, n) => at((n - 19) * 24 * HOUR)),
    );
    await received(
      fresh.tenantId,
      fresh.connectionId,
      Array.from({ length: 5 }, (_, n) => at(n * MINUTE)),
    );
    const lastBusy = 48 * 10 * MINUTE;

    // 40 minutes after the busy one's last delivery: 4 usual gaps, under the 1 h floor: nothing.
    expect((await sweep().run(at(lastBusy + 40 * MINUTE))).silent).toEqual([]);
    // 3 hours: far past 6 × 10 min (and the floor): busy is silent; the slow one is not (1 day gaps).
    const found = await sweep().run(at(lastBusy + 3 * HOUR));
    expect(found.silent).toEqual([busy.connectionId]);
    expect(await silentAlerts(busy.connectionId)).toEqual([{ status: "open", count: 1 }]);
    const [view] = (
      await app.sql.query<{ summary: string }>("SELECT summary FROM alerts WHERE connection_id = $1", [
        busy.connectionId,
      ])
    ).rows;
    expect(view!.summary).toContain("every 10 min");
    // Still silent at the next sweep: the same alert counts, no second one.
    await sweep().run(at(lastBusy + 3 * HOUR + 5 * MINUTE));
    expect(await silentAlerts(busy.connectionId)).toEqual([{ status: "open", count: 2 }]);
    expect(await silentAlerts(slow.connectionId)).toEqual([]);
    // Two days after the slow one's last delivery: 2 usual gaps, not silent; 7 days: silent.
    expect((await sweep().run(at(2 * 24 * HOUR))).silent).not.toContain(slow.connectionId);
    expect((await sweep().run(at(7 * 24 * HOUR))).silent).toContain(slow.connectionId);
    // Too little history to know a usual gap: never silent.
    expect(await silentAlerts(fresh.connectionId)).toEqual([]);
    // A notification job was created with the opening (one per channel: none here).
    const notifications = await app.sql.query(
      "SELECT 1 FROM jobs j JOIN alerts a ON a.id = j.alert_id WHERE a.connection_id = $1",
      [busy.connectionId],
    );
    expect(notifications.rowCount).toBe(0);
  });

  it("a delivery after the silence resolves the alert; a silence after that opens a new one", async () => {
    const c = await app.createConnection({ provider: "staticforms", inboundAuth: { type: "bearer" } });
    await received(
      c.tenantId,
      c.connectionId,
      Array.from({ length: 20 }, (_, n) => at(n * 5 * MINUTE)),
    );
    const last = 19 * 5 * MINUTE;
    expect((await sweep().run(at(last + 2 * HOUR))).silent).toEqual([c.connectionId]);
    await received(c.tenantId, c.connectionId, [at(last + 2 * HOUR + MINUTE)]);
    const after = await sweep().run(at(last + 2 * HOUR + 2 * MINUTE));
    expect(after.silent).not.toContain(c.connectionId);
    expect(after.resolved).toBeGreaterThanOrEqual(1);
    expect(await silentAlerts(c.connectionId)).toEqual([{ status: "resolved", count: 1 }]);
    // Alerts re-open within 10 minutes of their resolution (in the database's time): this one
    // resolved 11 minutes before the next silence.
    await app.sql.query(
      "UPDATE alerts SET resolved_at = now() - interval '11 minutes' WHERE connection_id = $1",
      [c.connectionId],
    );
    await sweep().run(at(last + 6 * HOUR));
    expect(await silentAlerts(c.connectionId)).toEqual([
      { status: "resolved", count: 1 },
      { status: "open", count: 1 },
    ]);
    // Disabling the connection resolves its connection alerts.
    expect((await app.operator.delete(`/admin/connections/${c.connectionId}`)).status).toBe(204);
    expect(await silentAlerts(c.connectionId)).toEqual([
      { status: "resolved", count: 1 },
      { status: "resolved", count: 1 },
    ]);
  });
});
