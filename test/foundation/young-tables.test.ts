// Statistics for young tables (src/common/young-tables.ts): the worker analyzes a table that has
// had 50 rows written and was never analyzed, before autovacuum's first pass would, so that
// statements are planned on statistics. Asserted on the catalog and on the plan Postgres uses for
// a statement prepared before. Autovacuum is off for the tables involved, so only the worker can
// have analyzed them.
import { useApp } from "../support/harness.js";
import { waitFor } from "../support/wait.js";
import { YoungTables } from "../../src/common/young-tables.js";

const TENANT = "00000000-0000-4000-8000-000000000001";

describe("statistics for young tables", () => {
  const app = useApp({ api: false, worker: true });

  /** Whether Postgres has statistics of the table: analyzed (or vacuumed) at least once. */
  const analyzed = async (table: string) =>
    (
      await app.sql.query<{ yes: boolean }>("SELECT reltuples >= 0 AS yes FROM pg_class WHERE relname = $1", [
        table,
      ])
    ).rows[0]!.yes;

  /** Rows written to the table since its last analysis, as Postgres counts them (waits for them to be counted). */
  const counted = (table: string, rows: number) =>
    waitFor(
      async () =>
        Number(
          (
            await app.sql.query<{ n: string }>(
              "SELECT n_mod_since_analyze AS n FROM pg_stat_user_tables WHERE relname = $1",
              [table],
            )
          ).rows[0]!.n,
        ),
      (n) => n >= rows,
      10_000,
    );

  const addLeads = (from: number, to: number) =>
    app.sql.query(
      `INSERT INTO leads (tenant_id, connection_id, provider, external_lead_id, last_event_at)
         SELECT $1, gen_random_uuid(), 'staticforms', 'submission-' || n, now() FROM generate_series($2::int, $3::int) n`,
      [TENANT, from, to],
    );

  beforeAll(async () => {
    for (const table of ["tenants", "leads", "partition_drops"]) {
      await app.sql.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
    }
  });

  it("analyzes a table once 50 rows were written to it, and the plans made before are made again", async () => {
    await app.sql.query("INSERT INTO tenants (id, name) VALUES ($1, 'Young')", [TENANT]);
    await addLeads(1, 3);
    // A lookup by the lead's key, planned (generic, as SqlBatch runs them) while the table is nearly empty.
    const client = await app.sql.connect();
    try {
      await client.query("SET plan_cache_mode = force_generic_plan");
      await client.query(
        `PREPARE lead_by_key(uuid, text, text) AS
           SELECT id FROM leads WHERE tenant_id = $1 AND provider = $2 AND external_lead_id = $3`,
      );
      await client.query(`EXECUTE lead_by_key('${TENANT}', 'staticforms', 'submission-2')`);

      await addLeads(4, 3000);
      await app.sql.query(
        `INSERT INTO partition_drops (parent, range_start, range_end, survivors)
           SELECT 'receipt_payloads', d, d + interval '1 month', 0
           FROM generate_series('2020-01-01'::timestamptz, '2020-10-01', interval '1 month') d`,
      );
      await waitFor(
        () => analyzed("leads"),
        (yes) => yes,
        10_000,
      );

      // The statement prepared before is planned again, on statistics: through the unique key, not
      // through another index that begins with tenant_id (which reads every lead of the tenant).
      const { rows } = await client.query<{ "QUERY PLAN": string }>(
        `EXPLAIN EXECUTE lead_by_key('${TENANT}', 'staticforms', 'submission-7')`,
      );
      expect(rows[0]!["QUERY PLAN"]).toContain("leads_tenant_id_provider_external_lead_id_key");
    } finally {
      client.release(true);
    }

    // Ten rows, and one: below the threshold, still without statistics (and not listed by a pass).
    await counted("partition_drops", 10);
    expect(await app.worker.get(YoungTables).analyze()).toEqual([]);
    expect(await analyzed("partition_drops")).toBe(false);
    expect(await analyzed("tenants")).toBe(false);
  });

  it("leaves a table with statistics alone, however much is written to it", async () => {
    await addLeads(3001, 3100);
    // Once Postgres counts the 100 rows written since the analysis: not young any more.
    await counted("leads", 100);
    expect(await app.worker.get(YoungTables).analyze()).toEqual([]);
  });
});
