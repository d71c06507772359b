import type pg from "pg";

/** How stale the set may be before a miss refreshes it. */
const REFRESH_AFTER_MS = 5_000;
/** Rows created this long before the previous refresh are read again (transactions committing late). */
const OVERLAP = "60 seconds";

/**
 * Every identifier of a table held in memory (connection ids, API key prefixes), so that a request
 * whose identifier does not exist can be told apart without a query per request. `mayExist` reads
 * the set; on a miss it first brings the set up to date, at most once per REFRESH_AFTER_MS (the
 * first call loads the whole table, later ones only the rows created since, with an overlap). So a
 * flood of made-up identifiers costs one small query per 5 s, and a row created by another process
 * is known here at most 5 s after it was committed. Rows are never removed (a disabled connection or
 * a revoked key still exists; the full check that follows refuses it).
 *
 * `sql` selects `id` (the identifier) from rows with `created_at >= $1`.
 */
export class KnownIds {
  private readonly ids = new Set<string>();
  private since: Date = new Date(0);
  private refreshedAt = 0;
  private refreshing: Promise<void> | undefined;

  constructor(
    private readonly pool: pg.Pool,
    private readonly sql: string,
  ) {}

  /** Records an identifier seen existing (found by a lookup, or created by this process). */
  add(id: string): void {
    this.ids.add(id);
  }

  /**
   * False only when the identifier did not exist at the latest refresh (at most 5 s ago). If the
   * refresh fails (the database is down), the set as it stands answers.
   */
  async mayExist(id: string): Promise<boolean> {
    if (this.ids.has(id)) return true;
    if (Date.now() - this.refreshedAt >= REFRESH_AFTER_MS) {
      this.refreshing ??= this.refresh()
        .catch(() => undefined)
        .finally(() => {
          this.refreshedAt = Date.now();
          this.refreshing = undefined;
        });
      await this.refreshing;
    }
    return this.ids.has(id);
  }

  private async refresh(): Promise<void> {
    const { rows } = await this.pool.query<{ id: string | null; since: Date }>(
      `SELECT now() - interval '${OVERLAP}' AS since, x.id FROM (SELECT 1) one LEFT JOIN (${this.sql}) x ON true`,
      [this.since],
    );
    for (const row of rows) if (row.id !== null) this.ids.add(row.id);
    if (rows[0]) this.since = rows[0].since;
  }
}
