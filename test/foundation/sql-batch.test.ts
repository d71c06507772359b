// SqlBatch (src/common/sql-batch.ts): statements handed over while a batch is in flight go to
// Postgres together, as one multi-statement message in one transaction, each with its values written
// as literals. Asserted on what Postgres answers and stores: each caller gets its own statement's
// rows, a batch commits once, and a statement Postgres refuses fails only its own caller.
import { SqlBatch } from "../../src/common/sql-batch.js";
import { PrismaService } from "../../src/database/prisma.service.js";
import { useApp } from "../support/harness.js";

describe("SQL batch", () => {
  const app = useApp({ api: false });
  let prisma: PrismaService;
  let batch: SqlBatch;

  beforeAll(async () => {
    prisma = new PrismaService(app.config);
    app.defer(() => prisma.onModuleDestroy());
    batch = new SqlBatch(prisma);
    await app.sql.query(
      "CREATE TABLE batch_probe (id int PRIMARY KEY, note text, tags text[], at timestamptz)",
    );
  });

  /**
   * How many transactions last wrote the probe rows of `ids`: rows written in one transaction share
   * its id (`xmin`). Counted from the rows themselves, not from pg_stat_database, whose commit
   * counts a backend publishes up to seconds late.
   */
  const writers = async (ids: number[]) =>
    (
      await app.sql.query<{ n: number }>(
        "SELECT count(DISTINCT xmin::text)::int AS n FROM batch_probe WHERE id = ANY($1)",
        [ids],
      )
    ).rows[0]!.n;

  it("answers each caller its own statement's rows, with values of every kind read back as sent", async () => {
    const at = new Date("2026-12-01T02:00:00.123Z");
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        batch.query<{
          id: number;
          note: string;
          tags: string[];
          at: Date;
          flag: boolean;
          doc: { q: string };
        }>(
          `INSERT INTO batch_probe (id, note, tags, at) VALUES ($1, $2, $3::text[], $4)
           RETURNING id, note, tags, at, $5::boolean AS flag, $6::jsonb AS doc`,
          [i, `it's \\ "${i}" $1`, ["a,b", 'c"d', "e\\f"], at, i % 2 === 0, { q: "o'k" }],
        ),
      ),
    );
    results.forEach(({ rows }, i) =>
      expect(rows).toEqual([
        {
          id: i,
          note: `it's \\ "${i}" $1`,
          tags: ["a,b", 'c"d', "e\\f"],
          at,
          flag: i % 2 === 0,
          doc: { q: "o'k" },
        },
      ]),
    );
  });

  it("commits the statements handed over together once, not once each", async () => {
    await batch.query("SELECT 1"); // a connection is open
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        batch.query("UPDATE batch_probe SET note = $2 WHERE id = $1", [i % 30, `n${i}`]),
      ),
    );
    const { rows } = await app.sql.query<{ id: number; note: string }>(
      "SELECT id, note FROM batch_probe WHERE id < 30 ORDER BY id",
    );
    // Every row holds one of its updates' notes (rows 0–9 had two).
    rows.forEach(({ id, note }) => expect([`n${id}`, `n${id + 30}`]).toContain(note));
    expect(rows).toHaveLength(30);
    // One by one, the 30 rows would each show the transaction of their last update.
    expect(await writers(Array.from({ length: 30 }, (_, i) => i))).toBeLessThanOrEqual(3);
  });

  it("a statement Postgres refuses fails only its caller: the others of its batch are committed", async () => {
    // Every lane busy for a moment: the inserts below wait, and then go together in one batch.
    const busy = Array.from({ length: 3 }, () => batch.query("SELECT pg_sleep(0.3)"));
    const outcomes = await Promise.all(
      [100, 101, 0, 102].map((id) =>
        batch.query("INSERT INTO batch_probe (id, note) VALUES ($1, 'new')", [id]).then(
          () => "inserted",
          (error: { code?: string }) => error.code,
        ),
      ),
    );
    await Promise.all(busy);
    expect(outcomes).toEqual(["inserted", "inserted", "23505", "inserted"]);
    const { rows } = await app.sql.query<{ id: number }>(
      "SELECT id FROM batch_probe WHERE note = 'new' ORDER BY id",
    );
    expect(rows.map((row) => row.id)).toEqual([100, 101, 102]);

    // The refused batch's connection went with what it had prepared: the same statements go in one
    // batch again (one commit), not one by one.
    const again = Array.from({ length: 2 }, () => batch.query("SELECT pg_sleep(0.3)"));
    const retried = await Promise.all(
      [103, 104, 105, 106, 107, 108].map((id) =>
        batch.query("INSERT INTO batch_probe (id, note) VALUES ($1, 'new')", [id]),
      ),
    );
    await Promise.all(again);
    expect(retried.map((result) => result.rowCount)).toEqual([1, 1, 1, 1, 1, 1]);
    expect(await writers([103, 104, 105, 106, 107, 108])).toBe(1);
  });

  const backend = async () =>
    (await batch.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;

  it("a statement alone that Postgres refuses answers its own error, and its connection stays", async () => {
    const insert = "INSERT INTO batch_probe (id, note) VALUES ($1, 'alone')";
    await batch.query(insert, [200]); // prepared on this connection
    const pid = await backend();
    await expect(batch.query(insert, [200])).rejects.toMatchObject({ code: "23505" });
    expect(await backend()).toBe(pid);
  });

  it("prepares a statement again on its connection after 10 and 100 runs, answering right throughout", async () => {
    const pid = await backend();
    const text = "SELECT $1::int + 1 AS next, 'replan probe' AS probe";
    const preparedAt = async () =>
      (
        await batch.query<{ at: Date }>(
          "SELECT prepare_time AS at FROM pg_prepared_statements WHERE statement LIKE '%replan probe%' AND statement NOT LIKE '%pg_prepared_statements%'",
        )
      ).rows[0]!.at;
    await batch.query(text, [0]);
    const first = await preparedAt();
    for (let i = 1; i <= 120; i++) {
      expect((await batch.query<{ next: number }>(text, [i])).rows[0]!.next).toBe(i + 1);
    }
    expect((await preparedAt()).getTime()).toBeGreaterThan(first.getTime());
    expect(await backend()).toBe(pid); // the same connection all along: nothing failed
  });
});
