import { createTestDatabase, type TestDatabase } from "../support/database.js";

describe("test harness", () => {
  let first: TestDatabase;
  let second: TestDatabase;

  beforeAll(async () => {
    [first, second] = await Promise.all([createTestDatabase(), createTestDatabase()]);
  });
  afterAll(async () => {
    await Promise.all([first.drop(), second.drop()]);
  });

  it("gives every test file a migrated database of its own", async () => {
    expect(first.name).not.toEqual(second.name);
    const { rows } = await first.sql.query<{ count: string }>(
      "SELECT count(*) FROM _prisma_migrations WHERE finished_at IS NOT NULL",
    );
    expect(Number(rows[0]?.count)).toBeGreaterThan(0);
  });

  it("keeps one file's rows out of another file's database", async () => {
    await first.sql.query("INSERT INTO tenants (name) VALUES ('only-in-first')");
    const mine = await first.sql.query("SELECT name FROM tenants");
    const theirs = await second.sql.query("SELECT name FROM tenants");
    expect(mine.rows).toEqual([{ name: "only-in-first" }]);
    expect(theirs.rows).toEqual([]);
  });
});
