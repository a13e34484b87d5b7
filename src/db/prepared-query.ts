/**
 * Kysely queries built and compiled once, then run with new values. Kysely builds a query through
 * immutable builders and compiles it to SQL on every call; for the statements of a sign-in that
 * cost more than SQLite takes to run them (a session lookup: 14.6 µs through the builders, 3.3 µs
 * compiled once). The SQL of such a query never changes — only its bound values do — so it is
 * compiled once per dialect with stand-ins for the arguments, and each call binds the arguments in
 * the stand-ins' places.
 *
 * The query's shape must not depend on its arguments: `build` may only pass each argument to
 * Kysely as a value to bind (`where(column, '=', arg)`, `values({ column: arg })`, `set(…)`), never
 * look at it. An argument that does not come out as exactly one bound value throws on first use.
 */
import { CompiledQuery, type Compilable, type Kysely, type QueryResult } from 'kysely';
import type { Database } from './schema.js';

type Q = Kysely<Database>;

interface Compiled {
  sql: string;
  /** For each bound value of the SQL: the index of the argument it takes, or the constant it is. */
  slots: ReadonlyArray<{ argument: number } | { constant: unknown }>;
}

// Mixed case and NUL bytes: a stand-in that was looked at (lower-cased, trimmed, concatenated) no
// longer matches, and one left inside the SQL text or another value is caught.
const STAND_IN_MARK = '\u0000Prepared-Query-Argument-';
const STAND_IN = /^\u0000Prepared-Query-Argument-(\d+)\u0000$/;
const standIn = (index: number) => `${STAND_IN_MARK}${index}\u0000`;

export interface PreparedQuery<Args extends unknown[], Row> {
  /** Runs the query through `db` (Kysely's executor: a transaction's connection when `db` is one). */
  (db: Q, ...args: Args): Promise<QueryResult<Row>>;
  /**
   * The same statement as SQL and values, for running it elsewhere: a better-sqlite3 statement
   * prepared from `sql` once runs the same SQL as the Kysely path, synchronously.
   */
  bind(db: Q, ...args: Args): { sql: string; values: unknown[] };
}

export function preparedQuery<Args extends unknown[], Row>(build: (db: Q, ...args: Args) => Compilable<Row>): PreparedQuery<Args, Row> {
  // By the dialect's adapter: one per Kysely instance, shared by its transactions.
  const compiledFor = new WeakMap<object, Compiled>();
  const bind = (db: Q, ...args: Args) => {
    const adapter = db.getExecutor().adapter;
    let compiled = compiledFor.get(adapter);
    if (compiled === undefined) {
      compiled = compile(db, build, args.length);
      compiledFor.set(adapter, compiled);
    }
    return { sql: compiled.sql, values: compiled.slots.map((slot) => ('argument' in slot ? args[slot.argument] : slot.constant)) };
  };
  const run = (db: Q, ...args: Args) => {
    const { sql, values } = bind(db, ...args);
    return db.executeQuery<Row>(CompiledQuery.raw(sql, values));
  };
  return Object.assign(run, { bind });
}

function compile<Args extends unknown[], Row>(db: Q, build: (db: Q, ...args: Args) => Compilable<Row>, arity: number): Compiled {
  const standIns = Array.from({ length: arity }, (_, index) => standIn(index));
  const { sql, parameters } = build(db, ...(standIns as Args)).compile();
  const uses = new Array<number>(arity).fill(0);
  const slots = parameters.map((value) => {
    const match = typeof value === 'string' ? STAND_IN.exec(value) : null;
    if (match === null) {
      if (typeof value === 'string' && value.includes(STAND_IN_MARK)) throw new Error(`a prepared query must bind its arguments as they are, not ${JSON.stringify(value)}`);
      return { constant: value };
    }
    const argument = Number(match[1]);
    uses[argument]!++;
    return { argument };
  });
  if (sql.includes(STAND_IN_MARK)) throw new Error(`a prepared query must bind its arguments, not write them into the SQL: ${sql}`);
  const misused = uses.findIndex((count) => count !== 1);
  if (misused !== -1) {
    throw new Error(`a prepared query must bind each argument exactly once; argument ${misused} is bound ${uses[misused]} times in: ${sql}`);
  }
  return { sql, slots };
}
