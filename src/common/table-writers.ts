// Where a table is written, found in source text: the shared part of the "one writer per table"
// architecture tests (src/connections/connection-writers.spec.ts, src/jobs/state/job-writers.spec.ts,
// src/leads/lead-writers.spec.ts). Pure: it reads no file; the specs hand it src/'s files
// (test/support/source-files.ts).
//
// A write is SQL that inserts into, updates, deletes from, merges into or truncates the table, a
// call of a writing method (create, update, upsert, delete and their Many forms) on the table's
// Prisma model, or a nested write of those through a relation named like the table or the model
// (table-writers.spec.ts has an example of each). Matched over the whole text, so a statement or a
// call chain split over lines is found too; comments are not told apart (word a comment so it does
// not read as a write, as this one is). What it cannot see: SQL whose table name is built at run
// time (a template's placeholder in place of the name).

/** A table as SQL names it (`jobs`) and as its Prisma model's client property does (`job`). */
export interface Table {
  table: string;
  model: string;
}

/** A source file: its path (relative to src/, with `/`) and its text. */
export interface SourceFile {
  path: string;
  text: string;
}

/** A file that writes the table, and the lines (1-based) where it does. */
export interface Writer {
  path: string;
  lines: number[];
}

const PRISMA_WRITES =
  "create|createMany|createManyAndReturn|update|updateMany|updateManyAndReturn|upsert|delete|deleteMany";
const NESTED_WRITES = "create|createMany|connectOrCreate|update|updateMany|upsert|delete|deleteMany";

const escaped = (name: string) => name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The patterns of a write of `table`, each global (one per kind of write). */
function patterns({ table, model }: Table): RegExp[] {
  const sqlName = `(?:"?public"?\\s*\\.\\s*)?"?${escaped(table)}"?(?![\\w"])`;
  return [
    new RegExp(
      `\\b(?:UPDATE|INSERT\\s+INTO|DELETE\\s+FROM|MERGE\\s+INTO|TRUNCATE(?:\\s+TABLE)?)\\s+(?:ONLY\\s+)?${sqlName}`,
      "gi",
    ),
    new RegExp(`\\.${escaped(model)}\\s*\\.\\s*(?:${PRISMA_WRITES})\\s*\\(`, "g"),
    new RegExp(`\\b(?:${escaped(table)}|${escaped(model)})\\s*:\\s*\\{\\s*(?:${NESTED_WRITES})\\s*:`, "g"),
  ];
}

/** The lines (1-based, ascending, each once) of `source` where `table` is written. */
export function tableWrites(source: string, table: Table): number[] {
  const lines = new Set<number>();
  for (const pattern of patterns(table)) {
    for (const match of source.matchAll(pattern)) {
      lines.add(source.slice(0, match.index).split("\n").length);
    }
  }
  return [...lines].sort((a, b) => a - b);
}

/** Whether `path` is one of `allowed`: a file named exactly, or inside a folder named with a trailing `/`. */
export function isAllowed(path: string, allowed: readonly string[]): boolean {
  return allowed.some((entry) => (entry.endsWith("/") ? path.startsWith(entry) : path === entry));
}

/** The files of `files` that write `table`, with their lines. */
export function tableWriters(files: readonly SourceFile[], table: Table): Writer[] {
  return files
    .map((file) => ({ path: file.path, lines: tableWrites(file.text, table) }))
    .filter((writer) => writer.lines.length > 0);
}

/**
 * What an architecture test checks: `outside`, the writers not in `allowed` (should be none), and
 * `idle`, the entries of `allowed` under which nothing writes (should be none: an allowance outlives
 * its reason otherwise).
 */
export function writersCheck(
  files: readonly SourceFile[],
  table: Table,
  allowed: readonly string[],
): { outside: Writer[]; idle: string[] } {
  const writers = tableWriters(files, table);
  return {
    outside: writers.filter((writer) => !isAllowed(writer.path, allowed)),
    idle: allowed.filter((entry) => !writers.some((writer) => isAllowed(writer.path, [entry]))),
  };
}
