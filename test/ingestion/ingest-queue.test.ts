// The in-memory queue of deliveries waiting for their receipt write is bounded (INGEST_QUEUE_LIMIT):
// while the database is stuck, deliveries beyond it get 503 with Retry-After at once and write
// nothing; those within it are written when the database moves again.
import { storedFor } from "../support/database.js";
import { useApp } from "../support/harness.js";
import { type Answer, post } from "../support/http.js";
import type { TestConnection } from "../support/tenants.js";
import { waitFor } from "../support/wait.js";

describe("ingest queue bound", () => {
  const app = useApp({ env: { INGEST_QUEUE_LIMIT: "2" } });
  let c: TestConnection;

  beforeAll(async () => {
    c = await app.createConnection({ provider: "staticforms", inboundAuth: { type: "bearer" } });
  });

  const deliver = (id: string) =>
    post(
      `${app.url}/webhooks/staticforms/${c.connectionId}`,
      { event: "form.submitted", data: { submissionId: id, formData: { name: "Q" } } },
      { authorization: `Bearer ${c.secrets.bearerToken}` },
    );

  it("beyond the limit: 503 + Retry-After at once, nothing written; the queued ones are written after", async () => {
    // Hold the receipts table: the first delivery's write blocks, later ones wait in memory.
    const lock = await app.sql.connect();
    await lock.query("BEGIN");
    await lock.query("LOCK TABLE receipts IN ACCESS EXCLUSIVE MODE");
    const settled: Answer[] = [];
    const track = (pending: Promise<Answer>) => pending.then((answer) => (settled.push(answer), answer));
    let all: Promise<Answer[]> | undefined;
    try {
      const first = track(deliver("queue-0"));
      await waitFor(
        async () =>
          (
            await app.sql.query<{ n: number }>(
              // The receipt statement waiting for the table (its text may be cut short in pg_stat_activity).
              "SELECT count(DISTINCT pid)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'receipts'::regclass",
            )
          ).rows[0]!.n,
        (n) => n === 1,
      );
      // Five more: two fit in the queue behind the blocked write, three are refused.
      const rest = Array.from({ length: 5 }, (_, i) => track(deliver(`queue-${i + 1}`)));
      all = Promise.all([first, ...rest]);
      await waitFor(
        () => Promise.resolve(settled.length),
        (n) => n >= 3,
        10_000,
      );
      expect(settled).toHaveLength(3);
      for (const refused of settled) {
        expect(refused.status).toBe(503);
        expect(refused.body.error).toBe("unavailable");
        expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      }
    } finally {
      await lock.query("ROLLBACK");
      lock.release();
    }
    const answers = await all;
    expect(answers.map((answer) => answer.status).sort()).toEqual([202, 202, 202, 503, 503, 503]);
    expect(await storedFor(app.sql, c.tenantId)).toMatchObject({ receipts: 3 });
    // The queue drained: the next delivery is written.
    expect((await deliver("queue-after")).status).toBe(202);
  });
});
