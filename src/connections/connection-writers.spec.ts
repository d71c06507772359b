// Architecture test: the connection store is the only writer of the `connections` row. Any other
// file of src/ that inserts, updates or deletes it, in SQL or through Prisma's model API, fails this
// test with its path and line (the scan: src/common/table-writers.ts). The store is named file by
// file, so another file of src/connections/ that writes the row fails it too.
import { sourceFiles } from "../../test/support/source-files.js";
import { tableWrites, writersCheck } from "../common/table-writers.js";

const CONNECTIONS = { table: "connections", model: "connection" };

/** The store's files: the only ones that write the row. */
const STORE = [
  // The store: creation, and every change of status or grant (apply: row, jobs and alerts together).
  "connections/connection-store.ts",
  // Its bookkeeping of sub-states: one statement each, guarded by the named transition's `from`.
  "connections/connection-substates.ts",
  // Its re-seal for `npm run secrets:reencrypt` (transition `reseal`), a CLI without the Nest container.
  "connections/connection-secrets.ts",
];

const connectionWrites = (source: string) => tableWrites(source, CONNECTIONS);

describe("the connection store is the only writer of connections", () => {
  it("finds writes in SQL and through Prisma, and nothing else", () => {
    expect(connectionWrites("await pool.query(`UPDATE connections SET status = 'paused'`)")).toEqual([1]);
    expect(connectionWrites('x;\nawait db.$executeRaw`update "connections" set x = 1`')).toEqual([2]);
    expect(connectionWrites("INSERT INTO connections (id) VALUES ($1)")).toEqual([1]);
    expect(connectionWrites("DELETE FROM connections WHERE id = $1")).toEqual([1]);
    expect(connectionWrites("await tx.connection.update({ where: { id } })")).toEqual([1]);
    expect(connectionWrites("await this.prisma.connection\n  .deleteMany()")).toEqual([1]); // a chain over lines
    expect(connectionWrites("await this.prisma.connection.upsert({")).toEqual([1]);
    expect(connectionWrites("data: { connections: { create: [] } }")).toEqual([1]); // nested, from the tenant
    // Reads, other tables, and words that only look alike are not writes.
    expect(connectionWrites("SELECT status FROM connections WHERE id = $1 FOR UPDATE")).toEqual([]);
    expect(connectionWrites("UPDATE connections_archive SET x = 1")).toEqual([]);
    expect(connectionWrites("await tx.connection.findFirst({ where })")).toEqual([]);
    expect(connectionWrites('action: "connection.update",')).toEqual([]);
  });

  it("no file but the store's writes the row, and each of the store's files does", () => {
    expect(writersCheck(sourceFiles(), CONNECTIONS, STORE)).toEqual({ outside: [], idle: [] });
  });
});
