import { randomBytes } from "node:crypto";
import pg from "pg";

const ADMIN_URL = process.env.TEST_POSTGRES_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres";

export interface TestDatabase {
  name: string;
  url: string;
  /** A plain pg pool for assertions on rows (tests read the truth, not the app's view of it). */
  sql: pg.Pool;
  drop(): Promise<void>;
}

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** A fresh, migrated database of this test file's own, cloned from the run's template. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const template = process.env.LEADGATE_TEST_TEMPLATE;
  if (!template) throw new Error("LEADGATE_TEST_TEMPLATE is not set: run the tests with `npm test`");
  const name = `leadgate_test_${randomBytes(6).toString("hex")}`;
  await admin((client) => client.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
  return opened(name);
}

function opened(name: string): TestDatabase {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const sql = new pg.Pool({ connectionString: url.toString(), max: 4 });
  // DROP DATABASE ... WITH (FORCE) at the end may cut a connection the pool has not closed yet.
  sql.on("error", () => undefined);
  return {
    name,
    url: url.toString(),
    sql,
    async drop() {
      await sql.end();
      await admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/** An empty database of the test's own (no migration applied), e.g. to apply migrations step by step. */
export async function createEmptyDatabase(): Promise<TestDatabase> {
  const name = `leadgate_test_${randomBytes(6).toString("hex")}`;
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  return opened(name);
}

/** What a tenant has stored: the observable outcome of ingest. */
export async function storedFor(sql: pg.Pool, tenantId: string) {
  const count = async (table: string) =>
    Number(
      (await sql.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE tenant_id = $1`, [tenantId]))
        .rows[0]?.n,
    );
  return {
    receipts: await count("receipts"),
    jobs: await count("jobs"),
    conflicts: await count("payload_conflicts"),
  };
}
