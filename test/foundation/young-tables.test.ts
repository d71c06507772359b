// Statistics for young tables (src/common/young-tables.ts): the worker analyzes a table that has
// had 50 rows written and was never analyzed, before autovacuum's first pass would, so that
// statements are planned on statistics. Asserted on pg_stat_user_tables and on the plan Postgres
// makes. Autovacuum is off for the tables involved, so only the worker can have analyzed them.
import { useApp } from "../support/harness.js";
import { waitFor } from "../support/wait.js";

const TENANT = "00000000-0000-4000-8000-000000000001";

describe("statistics for young tables", () => {
  const app = useApp({ api: false, worker: true });

  const lastAnalyze = async (table: string) =>
    (
      await app.sql.query<{ at: Date | null }>(
        "SELECT last_analyze AS at FROM pg_stat_user_tables WHERE relname = $1",
        [table],
      )
    ).rows[0]?.at ?? null;

  beforeAll(async () => {
    for (const table of ["tenants", "leads", "partition_drops"]) {
      await app.sql.query(`ALTER TABLE ${table} SET (autovacuum_enabled = false)`);
    }
  });

  it("analyzes a table once 50 rows were written to it, and not a table with fewer", async () => {
    await app.sql.query("INSERT INTO tenants (id, name) VALUES ($1, 'Young')", [TENANT]);
    await app.sql.query(
      `INSERT INTO leads (tenant_id, connection_id, provider, external_lead_id, last_event_at)
         SELECT $1, gen_random_uuid(), 'staticforms', 'submission-' || n, now() FROM generate_series(1, 60) n`,
      [TENANT],
    );
    await app.sql.query(
      `INSERT INTO partition_drops (parent, range_start, range_end, survivors)
         SELECT 'receipt_payloads', d, d + interval '1 month', 0
         FROM generate_series('2020-01-01'::timestamptz, '2020-10-01', interval '1 month') d`,
    );

    const analyzed = await waitFor(
      () => lastAnalyze("leads"),
      (at) => at !== null,
      10_000,
    );
    expect(analyzed!.getTime()).toBeGreaterThan(Date.now() - 60_000);
    // Ten rows, and one: still young, below the threshold.
    expect(await lastAnalyze("partition_drops")).toBeNull();
    expect(await lastAnalyze("tenants")).toBeNull();

    // With statistics, once the table has grown (the planner scales them to its size), a lead's
    // lookup by its key is planned on the unique key, not on another index that begins with
    // tenant_id (which would read every lead of the tenant).
    await app.sql.query(
      `INSERT INTO leads (tenant_id, connection_id, provider, external_lead_id, last_event_at)
         SELECT $1, gen_random_uuid(), 'staticforms', 'submission-' || n, now() FROM generate_series(61, 3000) n`,
      [TENANT],
    );
    const client = await app.sql.connect();
    try {
      await client.query("SET plan_cache_mode = force_generic_plan");
      await client.query(
        `PREPARE lead_by_key(uuid, text, text) AS
           SELECT id FROM leads WHERE tenant_id = $1 AND provider = $2 AND external_lead_id = $3`,
      );
      const { rows } = await client.query<{ "QUERY PLAN": string }>(
        `EXPLAIN EXECUTE lead_by_key('${TENANT}', 'staticforms', 'submission-7')`,
      );
      expect(rows[0]!["QUERY PLAN"]).toContain("leads_tenant_id_provider_external_lead_id_key");
    } finally {
      client.release(true);
    }
  });
});
