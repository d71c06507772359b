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
const LANES = 2;

/**
 * Natural batching of independent single statements (src/common/natural-batcher.ts): while one
 * batch is in flight, the statements that callers hand over wait; then all of them go to Postgres
 * as one multi-statement message, which Postgres runs as one implicit transaction: one round trip
 * and one commit for the batch instead of one per statement. Nothing waits at low load: a
 * statement alone is a batch of one.
 *
 * Each statement text is parsed once per connection, not once per run: a batch is a message of
 * `EXECUTE name(literals)`, preceded by `PREPARE name AS text` for each text the connection has not
 * prepared yet, or not since it ran tenfold more often (FIRST_REPLAN). Each runs with its generic plan
 * (GENERIC_PLANS): made once per preparation, so a run costs no planning, and its choice of index
 * does not follow the literals of one run (a status list that the stale statistics of a growing
 * table call rare).
 * A multi-statement message takes no parameters: the values are written as literals (`literal`,
 * escaped by the driver's escapeLiteral) and typed by the prepared statement as its parameters
 * would be. Each statement runs as it would alone, in order, each with its own snapshot (READ
 * COMMITTED); a later one sees what an earlier one of the same batch wrote. When Postgres refuses
 * one statement (a deadlock, a constraint), the whole batch rolled back: then each runs again on
 * its own (parameterized, through the pool), so only the caller whose statement fails sees the
 * error (a statement alone answers its error at once). A connection whose failed message prepared
 * something is closed (what it holds is then uncertain). A connection failure fails the whole
 * batch (its outcome is unknown, as a single statement's would be). Prepared statements are state
 * of the database session: Leadgate needs session-level connections (a pooler in transaction mode
 * would reset them; SqlBatch then falls back to plain statements, one commit each).
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
    try {
      return (await this.execute(statements)).map((result) => ({ ok: true, result }));
    } catch (error) {
      if (!(error instanceof pg.DatabaseError || error instanceof TypeError)) throw error;
      // A statement alone that Postgres refused answers its own error, unless the refusal was of
      // the prepared path itself (or a value without a literal): then it runs as a plain statement.
      if (
        statements.length === 1 &&
        error instanceof pg.DatabaseError &&
        !PREPARED_PATH.has(error.code ?? "")
      )
        return [{ ok: false, error }];
      // Refused by Postgres (the batch rolled back): each on its own, so only its caller fails.
      return this.oneByOne(statements);
    }
  }

  /** The statements as one message of EXECUTEs on one connection (preparing what it has not prepared). */
  private async execute(statements: Statement[]): Promise<pg.QueryResult[]> {
    // The literals first: a value without one fails here, before any connection is taken.
    const executes = statements.map((statement) => executed(nameOf(statement.text), statement.values));
    const client = await this.pool.connect();
    let broken: Error | undefined;
    // A checked-out connection reports its failure (Postgres stopped, the socket cut) as an `error`
    // event besides failing the query: unheard, that event would end the process.
    const lost = (error: Error) => (broken = error);
    client.on("error", lost);
    const plans = plansOn(client);
    const fresh = new Map<string, number>(); // name -> runs until its next replanning
    try {
      const parts: string[] = [GENERIC_PLANS];
      statements.forEach((statement, index) => {
        const name = nameOf(statement.text);
        const plan = plans.get(name);
        if (!fresh.has(name) && (plan === undefined || plan.runs >= plan.replanAfter)) {
          if (plan) parts.push(`DEALLOCATE ${name}`);
          parts.push(`PREPARE ${name} AS ${statement.text}`);
          fresh.set(name, plan ? Math.min(plan.replanAfter * 10, LAST_REPLAN) : FIRST_REPLAN);
        }
        parts.push(executes[index]!);
      });
      // A line break before each `;`: a text ending in a `--` comment cannot swallow it.
      const answered = (await client.query(parts.join("\n;\n"))) as unknown as
        pg.QueryResult | pg.QueryResult[];
      for (const [name, replanAfter] of fresh) plans.set(name, { runs: 0, replanAfter });
      for (const statement of statements) plans.get(nameOf(statement.text))!.runs++;
      const results = (Array.isArray(answered) ? answered : [answered]).filter(
        (result) => !["SET", "PREPARE", "DEALLOCATE"].includes(result.command),
      );
      if (results.length !== statements.length) {
        throw new Error(`a batch of ${statements.length} statements answered ${results.length} results`);
      }
      return results;
    } catch (error) {
      // What a message that prepared something prepared before it failed is uncertain (a PREPARE
      // outlives a rolled-back statement): that connection goes, with everything it had prepared.
      // A message of EXECUTEs alone changed nothing of it: the connection stays.
      if (fresh.size > 0 || !(error instanceof pg.DatabaseError)) broken = error as Error;
      throw error;
    } finally {
      client.off("error", lost);
      client.release(broken);
    }
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

/** Each distinct statement text's name, the same on every connection (a few dozen texts in all). */
const names = new Map<string, string>();
const nameOf = (text: string): string => {
  let name = names.get(text);
  if (name === undefined) {
    name = `sql_batch_${names.size + 1}`;
    names.set(text, name);
  }
  return name;
};

/** The first statement of every batch: this transaction's prepared statements run their generic plans. */
const GENERIC_PLANS = "SET LOCAL plan_cache_mode = force_generic_plan";

/**
 * A prepared statement's generic plan is made from the tables as they were when it was planned, and
 * Postgres makes it again only after an ANALYZE (autovacuum: at most once a minute; a worker
 * analyzes a never-analyzed table sooner, src/common/young-tables.ts). A young
 * database's tables grow a thousandfold in that minute (a plan made on 10 rows reads all of them
 * where an index would read one), so each connection prepares a statement again after 10, 100,
 * 1,000, ... runs: a new plan for each tenfold, and one per 100,000 runs once the tables are grown.
 */
const FIRST_REPLAN = 10;
const LAST_REPLAN = 100_000;

/**
 * Refusals of the prepared path itself, not of the statement: a prepared statement missing or
 * already there (the connection's session was reset under it: a transaction-mode pooler such as
 * PgBouncer's, which Leadgate does not support, does that), or a plan whose result type changed
 * (a migration while running). A statement refused so runs again as a plain statement.
 */
const PREPARED_PATH = new Set(["26000", "42P05", "0A000"]);

/** The statements prepared on each connection of the pool, with their runs since (a closed connection takes them with it). */
const plansOnClient = new WeakMap<pg.PoolClient, Map<string, { runs: number; replanAfter: number }>>();
const plansOn = (client: pg.PoolClient) => {
  let plans = plansOnClient.get(client);
  if (plans === undefined) {
    plans = new Map();
    plansOnClient.set(client, plans);
  }
  return plans;
};

/** `EXECUTE name(literals)` (or `EXECUTE name` for a statement without parameters). */
export function executed(name: string, values: readonly unknown[]): string {
  return values.length === 0 ? `EXECUTE ${name}` : `EXECUTE ${name}(${values.map(literal).join(", ")})`;
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
