// One tenant's admin lists and searches cannot take the whole admin database pool (hardening L5: 4
// parallel searches of one tenant slowed another tenant's request to about 1 s). A tenant runs at
// most ADMIN_READS_PER_TENANT (2) of them at once per API process, of the admin pool's 4
// connections; one more waits up to 2 s for one of its own to end, then answers 429 rate_limited
// with Retry-After, having read nothing. Tenant A's searches are held in Postgres by a lock the test
// takes on `leads`, so "held" is a fact the test controls, not a duration.
import pg from "pg";
import { createTenant, OPERATOR_KEY, type AdminAnswer } from "../support/admin.js";
import { useApp } from "../support/harness.js";
import { waitFor } from "../support/wait.js";

describe("admin reads per tenant (ADMIN_READS_PER_TENANT)", () => {
  const app = useApp({ env: { LEADGATE_BOOTSTRAP_OPERATOR_KEY: OPERATOR_KEY } });

  /** Backends of this database waiting for a lock on `leads` (A's searches that reached Postgres). */
  const heldInPostgres = async () =>
    (
      await app.sql.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%"leads"%'`,
      )
    ).rows[0]!.n;

  it("4 searches of tenant A held in the database: 2 hold connections, 2 get 429 without reading; tenant B's list answers while A's are held", async () => {
    const a = await createTenant(app.url);
    const b = await createTenant(app.url);
    const locker = new pg.Client({ connectionString: app.db.url });
    await locker.connect();
    await locker.query("BEGIN");
    await locker.query("LOCK TABLE leads IN ACCESS EXCLUSIVE MODE");
    let unlocked = false;
    const answered: { answer: AdminAnswer; afterUnlock: boolean }[] = [];
    const searches = Array.from({ length: 4 }, () =>
      a.admin.get("/admin/leads?q=marta").then((answer) => {
        answered.push({ answer, afterUnlock: unlocked });
      }),
    );
    try {
      await waitFor(heldInPostgres, (n) => n >= 2);

      // B's list gets one of the connections A's share leaves free, while A's searches are held.
      const other = await b.admin.get("/admin/receipts");
      expect([other.status, other.body.items]).toEqual([200, []]);

      // A's two searches over its share waited for one of its own to end, then were refused.
      await waitFor(
        () => Promise.resolve(answered.length),
        (n) => n >= 2,
      );
      expect(answered).toHaveLength(2);
      for (const { answer, afterUnlock } of answered) {
        expect(afterUnlock).toBe(false);
        expect([answer.status, answer.body]).toEqual([
          429,
          { error: "rate_limited", message: expect.stringContaining("ADMIN_READS_PER_TENANT") },
        ]);
        expect(answer.headers.get("retry-after")).toBe("1");
      }
      expect(await heldInPostgres()).toBe(2); // the refused ones never reached Postgres
    } finally {
      unlocked = true;
      await locker.query("ROLLBACK");
      await locker.end();
      await Promise.all(searches);
    }
    // The two held searches answer once the lock is gone; A's share is free again.
    expect(answered.slice(2).map(({ answer, afterUnlock }) => [answer.status, afterUnlock])).toEqual([
      [200, true],
      [200, true],
    ]);
    expect((await a.admin.get("/admin/leads?q=marta")).status).toBe(200);
  }, 30_000);
});
