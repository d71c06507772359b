// Architecture test: the connection store (src/connections/) is the only writer of the
// `connections` row. Any other file of src/ that inserts, updates or deletes it, in SQL or
// through Prisma's model API, fails this test with its path and line.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";

const SRC = join(process.cwd(), "src");
/** Where the row may be written: the connections module (and the generated Prisma client, which writes nothing itself). */
const ALLOWED = [/^connections\//, /^generated\//];

const SQL_WRITE =
  /\b(?:UPDATE|INSERT\s+INTO|DELETE\s+FROM|MERGE\s+INTO|TRUNCATE(?:\s+TABLE)?)\s+(?:ONLY\s+)?"?connections"?(?![\w"])/i;
const PRISMA_WRITE =
  /\.connection\s*\.\s*(?:create|createMany|createManyAndReturn|update|updateMany|updateManyAndReturn|upsert|delete|deleteMany)\s*\(/;

/** The lines of `source` that write the connections row. */
export function connectionWrites(source: string): number[] {
  return source
    .split("\n")
    .flatMap((line, index) => (SQL_WRITE.test(line) || PRISMA_WRITE.test(line) ? [index + 1] : []));
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".spec.ts") ? [path] : [];
  });
}

describe("the connection store is the only writer of connections", () => {
  it("finds writes in SQL and through Prisma, and nothing else", () => {
    expect(connectionWrites("await pool.query(`UPDATE connections SET status = 'paused'`)")).toEqual([1]);
    expect(connectionWrites('x;\nawait db.$executeRaw`update "connections" set x = 1`')).toEqual([2]);
    expect(connectionWrites("INSERT INTO connections (id) VALUES ($1)")).toEqual([1]);
    expect(connectionWrites("DELETE FROM connections WHERE id = $1")).toEqual([1]);
    expect(connectionWrites("await tx.connection.update({ where: { id } })")).toEqual([1]);
    expect(connectionWrites("await this.prisma.connection\n  .deleteMany()")).toEqual([]); // one call per line, as prettier writes it
    expect(connectionWrites("await this.prisma.connection.upsert({")).toEqual([1]);
    // Reads, other tables, and words that only look alike are not writes.
    expect(connectionWrites("SELECT status FROM connections WHERE id = $1 FOR UPDATE")).toEqual([]);
    expect(connectionWrites("UPDATE connections_archive SET x = 1")).toEqual([]);
    expect(connectionWrites("await tx.connection.findFirst({ where })")).toEqual([]);
    expect(connectionWrites('action: "connection.update",')).toEqual([]);
  });

  it("no file outside src/connections/ writes the row", () => {
    const writers = sourceFiles(SRC)
      .map((path) => ({ file: relative(SRC, path), lines: connectionWrites(readFileSync(path, "utf8")) }))
      .filter(({ file, lines }) => lines.length > 0 && !ALLOWED.some((allowed) => allowed.test(file)));
    expect(writers).toEqual([]);
  });
});
