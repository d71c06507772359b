import { Injectable } from "@nestjs/common";
import pg from "pg";
import { PrismaService } from "../database/prisma.service.js";
import { NaturalBatcher } from "./natural-batcher.js";

/** One parameterized statement, as `pool.query(text, values)` takes it. */
interface Statement {
  text: string;
  values: readonly unknown[];
}

type Settled = { ok: true; result: pg.QueryResult } | { ok: false; error: unknown };

/** Statements sent together at most (one message, one transaction). */
const MAX_BATCH = 100;
/** Batches in flight at once (each on its own connection, so Postgres can run them on several cores). */
const LANES = 3;

/**
 * Natural batching of independent single statements (src/common/natural-batcher.ts): while one
 * batch is in flight, the statements that callers hand over wait; then all of them go to Postgres
 * as one multi-statement message, which Postgres runs as one implicit transaction: one round trip
 * and one commit for the batch instead of one per statement. Alone, a statement runs as it would
 * through the pool (parameterized), so nothing changes at low load.
 *
 * A multi-statement message takes no parameters: each statement's values are written into its
 * text as literals (`literal`, escaped by the driver's escapeLiteral). Each statement is read by
 * Postgres as it would be alone, in order, each with its own snapshot (READ COMMITTED); a later one
 * sees what an earlier one of the same batch wrote. When Postgres refuses one statement (a
 * deadlock, a constraint), the whole batch rolled back: then each runs again on its own, so only
 * the caller whose statement fails sees the error. A connection failure fails the whole batch (its
 * outcome is unknown, as a single statement's would be).
 *
 * For statements that each commit on their own (the job runner's hot path: claims, finishes,
 * side-effect records, lead upserts); never for a statement that must not share a transaction,
 * nor for one that waits on a lock for long (the batch behind it would wait too).
 */
@Injectable()
export class SqlBatch {
  private readonly pool: pg.Pool;
  private readonly batcher = new NaturalBatcher<Statement, Settled>((statements) => this.run(statements), {
    maxBatch: MAX_BATCH,
    maxInFlight: LANES,
  });

  constructor(prisma: PrismaService) {
    this.pool = prisma.pool;
  }

  async query<Row extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values: readonly unknown[] = [],
  ): Promise<pg.QueryResult<Row>> {
    const settled = await this.batcher.submit({ text, values });
    if (!settled.ok) throw settled.error;
    return settled.result as pg.QueryResult<Row>;
  }

  private async run(statements: Statement[]): Promise<Settled[]> {
    if (statements.length === 1) return this.oneByOne(statements);
    let results: pg.QueryResult[];
    try {
      const text = statements.map((statement) => inlined(statement)).join(";\n");
      results = (await this.pool.query(text)) as unknown as pg.QueryResult[];
    } catch (error) {
      // Refused by Postgres (the batch rolled back), or a value without a literal: each on its own.
      if (!(error instanceof pg.DatabaseError || error instanceof TypeError || error instanceof RangeError))
        throw error;
      return this.oneByOne(statements);
    }
    return results.map((result) => ({ ok: true, result }));
  }

  private oneByOne(statements: Statement[]): Promise<Settled[]> {
    return Promise.all(
      statements.map((statement) =>
        this.pool.query(statement.text, statement.values as unknown[]).then(
          (result): Settled => ({ ok: true, result }),
          (error: unknown): Settled => ({ ok: false, error }),
        ),
      ),
    );
  }
}

/** The statement's text with each `$n` replaced by the literal of its value. */
export function inlined({ text, values }: Statement): string {
  return text.replace(/\$(\d+)/g, (_, index: string) => {
    const position = Number(index);
    if (position < 1 || position > values.length) throw new RangeError(`no value for $${index}`);
    return literal(values[position - 1]);
  });
}

/** A value as a quoted SQL literal of unknown type (Postgres types it by context, as it types a parameter). */
export function literal(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "string") return pg.escapeLiteral(value);
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new TypeError(`not a finite number: ${value}`);
    return pg.escapeLiteral(String(value));
  }
  if (typeof value === "boolean") return value ? "'true'" : "'false'";
  if (value instanceof Date) return pg.escapeLiteral(value.toISOString());
  if (Array.isArray(value)) return pg.escapeLiteral(arrayLiteral(value));
  if (typeof value === "object") return pg.escapeLiteral(JSON.stringify(value));
  throw new TypeError(`no SQL literal for a ${typeof value}`);
}

/** A one-dimensional Postgres array literal (`{"a","b",NULL}`) of strings, numbers or nulls. */
function arrayLiteral(items: readonly unknown[]): string {
  const elements = items.map((item) => {
    if (item === null || item === undefined) return "NULL";
    if (typeof item !== "string" && typeof item !== "number")
      throw new TypeError(`no array element literal for a ${typeof item}`);
    return `"${String(item).replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  });
  return `{${elements.join(",")}}`;
}
