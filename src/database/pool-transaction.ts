import type pg from "pg";

/**
 * Runs `work` in one transaction on a connection checked out of `pool` (raw SQL that needs several
 * statements under one snapshot or one lock: retention's batches, a partition's drop). A
 * checked-out client has no pool listener: without one, the connection dying between two
 * statements (a database restart) would be an unhandled 'error' event and end the process. A
 * failed `work` is rolled back (a failed ROLLBACK counts as done: the connection is gone).
 */
export async function inPoolTransaction<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  const onLost = () => undefined;
  client.on("error", onLost);
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw error;
  } finally {
    client.off("error", onLost);
    client.release();
  }
}
