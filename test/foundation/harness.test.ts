import { createTestDatabase, type TestDatabase } from "../support/database.js";
import { startFakeServer } from "../support/fake-server.js";

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

describe("fake HTTP server", () => {
  it("records what it receives and answers as told", async () => {
    const fake = await startFakeServer();
    try {
      fake.reply({ status: 503, headers: { "retry-after": "1" } }, { status: 201, body: { id: "m1" } });
      const first = await fetch(`${fake.url}/v3/leads/l1/events`, {
        method: "POST",
        body: '{"a":1}',
        headers: { "x-key": "k" },
      });
      const second = await fetch(`${fake.url}/again`, { method: "POST", body: "{}" });
      const third = await fetch(`${fake.url}/fallback`);
      expect([first.status, second.status, third.status]).toEqual([503, 201, 200]);
      expect(first.headers.get("retry-after")).toBe("1");
      expect(await second.json()).toEqual({ id: "m1" });
      expect(fake.received.map((request) => [request.method, request.path])).toEqual([
        ["POST", "/v3/leads/l1/events"],
        ["POST", "/again"],
        ["GET", "/fallback"],
      ]);
      expect(fake.received[0]?.body).toBe('{"a":1}');
      expect(fake.received[0]?.headers["x-key"]).toBe("k");
    } finally {
      await fake.close();
    }
  });
});
