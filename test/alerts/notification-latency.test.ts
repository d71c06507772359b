// How a notification leaves, and that no alert comes from a trigger any more: the alert's
// notification jobs are created with it (an outbox in its transaction) and the worker's dispatcher
// hears of them at the commit (LISTEN/NOTIFY). Its poll is an hour apart here, so a message that
// arrives at all came through the commit's notice (the poll alone took 5 to 10 s at its default
// 5 s interval). The latencies are printed; how fast under load is a benchmark's question (bench/notification-fairness.mjs).
import { AlertBook } from "../../src/alerts/alert-book.js";
import { createTenant, OPERATOR_KEY } from "../support/admin.js";
import { useApp, useFakeServer } from "../support/harness.js";
import { waitFor } from "../support/wait.js";

const ROUNDS = 5;

describe("alerts: notification latency and no triggers", () => {
  const receiver = useFakeServer({ status: 204 });
  const app = useApp({
    worker: true,
    env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY, DISPATCHER_INTERVAL_MS: "3600000" },
  });

  it("a migrated database has no trigger of its own but the clients' two, and none raises an alert", async () => {
    // The clients migration's: a tenant's first client, and the client of a connection a process of
    // the previous release inserts without one (migration 20261215000000_clients). Neither touches alerts or jobs.
    const { rows } = await app.sql.query<{ name: string; table: string }>(
      `SELECT tgname AS name, tgrelid::regclass::text AS table FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgname`,
    );
    expect(rows).toEqual([
      { name: "connections_default_client", table: "connections" },
      { name: "tenants_first_client", table: "tenants" },
    ]);
  });

  it(`a webhook channel receives an alert's opening and resolution from its commit, not from a poll (${ROUNDS} rounds)`, async () => {
    const tenant = await createTenant(app.url);
    const channel = await tenant.admin.post("/admin/notification-channels", {
      type: "webhook",
      url: `${receiver.url}/latency`,
    });
    expect(channel.status).toBe(201);
    const book = app.api.app.get(AlertBook, { strict: false });
    const received = (transition: string) =>
      receiver.received.filter((request) => request.body.includes(`"type":"alert.${transition}"`));
    const latencies: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const occurrence = {
        tenantId: tenant.tenantId,
        type: "webhooks.missing" as const,
        errorCode: `round_${round}`,
        summary: "Reconciliation found leads no webhook delivered.",
      };
      const id = await book.raise(undefined, occurrence);
      const [opened] = await waitFor(
        () => Promise.resolve(received("opened").filter((request) => request.body.includes(id))),
        (requests) => requests.length === 1,
      );
      const { rows } = await app.sql.query<{ firstSeenAt: Date }>(
        `SELECT first_seen_at AS "firstSeenAt" FROM alerts WHERE id = $1`,
        [id],
      );
      latencies.push(opened!.at - rows[0]!.firstSeenAt.getTime());

      expect(await book.clear(undefined, { tenantId: tenant.tenantId, type: "webhooks.missing" })).toBe(1);
      await waitFor(
        () => Promise.resolve(received("resolved").filter((request) => request.body.includes(id))),
        (requests) => requests.length === 1,
      );
    }
    process.stdout.write(
      `[alerts] first_seen_at → webhook received, ms: ${latencies.join(", ")} (max ${Math.max(...latencies)})\n`,
    );
  });
});
