/**
 * The hot statements, declared once by their stores — their SQL, their parameters, how a row is
 * read — and run by the executor of the open database (./executor.ts), which owns how each dialect
 * runs them:
 *
 * - a read (`declareRead`): on SQLite one statement per call, kept on the read connection and run
 *   with the other reads of the turn in their read transaction (./sqlite-executor.ts); on
 *   PostgreSQL the reads of one turn of the event loop as ONE statement prepared by name, the
 *   calls' parameters as arrays (./postgres-turns.ts).
 * - a write (`declareWrite`): one statement per call, in the write connection's turn on SQLite,
 *   prepared by name on PostgreSQL.
 * - a claim (`declareClaim`): a write that changes one row or none — a proof key recorded, a token
 *   rotated, a code consumed — and answers whether it did. On SQLite the claims of a turn commit in
 *   one transaction (group commit: the commit is most of a write's cost); on PostgreSQL they are
 *   ONE statement, one round trip and one commit.
 *
 * The two dialects' texts differ where batching makes them differ: SQLite's answers one call with
 * `?` placeholders; PostgreSQL's answers a turn's calls, reading them from `input` (`turnStatement`).
 */
import type { KeptStatement } from './kept-statements.js';

/** Most reads one PostgreSQL statement answers, and the default of a claim's group; more start the next. */
export const MAX_TURN_CALLS = 256;

/**
 * A statement that answers the calls of one turn at once on PostgreSQL. Each of its parameters is
 * an array with one element per call, and the statement reads them as the rows of `input`: a column
 * per parameter, by its name, and `input.n`, the call's number (from 1).
 */
export interface TurnStatement {
  /** The name it is prepared under on each connection (./statement-names.ts); null: unnamed, planned at each execution. */
  readonly name: string | null;
  /** Its parameters' names, in the order of its arrays ($1, $2, …). */
  readonly parameters: readonly string[];
  readonly text: string;
}

/**
 * `text` gets `input`: the `unnest(…) WITH ORDINALITY AS input(…, n)` of the parameters, which are
 * given by name with their PostgreSQL types. A statement prepared by name reads each array through
 * a scalar subquery, so that PostgreSQL keeps one plan for it whatever the batch's size (the
 * planner reads an array's length from its value, and would plan short batches again at every
 * execution: docs/decisions/0029-kept-plans-for-named-statements.md); it must then probe a key per
 * row (a lateral subquery with LIMIT, which the planner does not flatten into a join), right for
 * one row as for 256. An unnamed one is planned for its values anyway, and gets them as they are.
 */
export function turnStatement(declaration: { name: string | null; parameters: Readonly<Record<string, string>>; text: (input: string) => string }): TurnStatement {
  const names = Object.keys(declaration.parameters);
  const arrays = names.map((name, i) => {
    const array = `$${i + 1}::${declaration.parameters[name]}[]`;
    return declaration.name === null ? array : `(select ${array})`;
  });
  const input = `unnest(${arrays.join(', ')}) with ordinality as input(${names.join(', ')}, n)`;
  return { name: declaration.name, parameters: names, text: declaration.text(input) };
}

/**
 * How a read's row is handed to its decoder:
 * - 'values': its values in the order of its select list, the same on both dialects (better-sqlite3's
 *   raw mode, pg's array rows: no object is made for the row); the PostgreSQL statement ends each row
 *   with `input.n`, after the values the decoder reads.
 * - 'object': by column name — on SQLite as better-sqlite3 makes it; on PostgreSQL as JSON
 *   (`row_to_json`) in one column of the statement's row, null when there is none, so that one
 *   statement can answer reads of several tables.
 */
export type RowShape = 'values' | 'object';

export interface DeclaredRead<Params extends readonly unknown[], Out> {
  /** One call's statement on SQLite, its parameters as `?` in order; its first row answers the call. */
  readonly sqlite: string;
  readonly rows: RowShape;
  /** The turn's statement on PostgreSQL; several reads may share one, and then share its batches. */
  readonly postgres: TurnStatement;
  /** For each of the statement's parameters, the index of the call's parameter it takes, or -1 (null). */
  readonly positions: readonly number[];
  /** 'object' rows: the column of the PostgreSQL row that holds the call's row. */
  readonly column: number;
  readonly decode: (row: never) => Out;
  /** Types only: the parameters of a call. */
  readonly params?: Params;
}

/**
 * A read of at most one row per call. On PostgreSQL the calls of a turn whose parameters are the
 * same share one row of `input`; each call decodes its own answer.
 */
export function declareRead<Params extends readonly unknown[], Out, Row = readonly unknown[]>(declaration: {
  sqlite: string;
  rows?: RowShape;
  postgres: TurnStatement;
  /** The statement's parameters that the call's parameters fill, in their order; by default all of them. */
  parameters?: readonly string[];
  column?: number;
  decode: (row: Row) => Out;
}): DeclaredRead<Params, Out> {
  const own = declaration.parameters ?? declaration.postgres.parameters;
  const unknown = own.find((name) => !declaration.postgres.parameters.includes(name));
  if (unknown !== undefined) throw new Error(`${declaration.postgres.name ?? 'the statement'} has no parameter ${unknown}`);
  return {
    sqlite: declaration.sqlite,
    rows: declaration.rows ?? 'values',
    postgres: declaration.postgres,
    positions: declaration.postgres.parameters.map((name) => own.indexOf(name)),
    column: declaration.column ?? 0,
    decode: declaration.decode as (row: never) => Out,
  };
}

export interface DeclaredWrite<Params extends readonly unknown[]> {
  readonly sqlite: string;
  readonly postgres: { readonly name: string; readonly text: string };
  /** Types only: the parameters of a call. */
  readonly params?: Params;
}

/** One statement per call, its parameters as `?` in order (numbered `$1`, `$2`, … for PostgreSQL). */
export function declareWrite<Params extends readonly unknown[]>(declaration: { name: string; sql: string }): DeclaredWrite<Params> {
  let n = 0;
  const text = declaration.sql.replace(/\?/g, () => `$${++n}`);
  return { sqlite: declaration.sql, postgres: { name: declaration.name, text } };
}

/**
 * SQLite's part of a claim written as code, for a claim of several statements (the claim of a
 * token and the insert of its new pair): run synchronously in the group's transaction, through
 * statements kept on the write connection; true when it claimed.
 */
export type ClaimOnSqlite<In> = (statement: KeptStatement, input: In) => boolean;

export interface DeclaredClaim<In> {
  /** One call's statement (true when it changed a row), or the code of a claim of several statements. */
  readonly sqlite: string | ClaimOnSqlite<In>;
  /**
   * The turn's statement on PostgreSQL; it answers a row for each call that claimed, the call's
   * first parameter (its key) in the row's first column. Absent for a claim made only on SQLite.
   */
  readonly postgres: TurnStatement | null;
  /** A call's parameters, its key first (to SQLite's statement when it is text, and to PostgreSQL's). */
  readonly values: (input: In) => readonly unknown[];
  /** Most calls one transaction or statement commits; more start the next. */
  readonly max: number;
  /** Errors that mean the call lost a race, not that it failed: answered false (`lostAlone`). */
  readonly lost: ((error: unknown) => boolean) | null;
}

/**
 * Calls claiming the same key in one turn are not sent in one statement: the first goes, and each
 * other one goes after it has committed, as it would have in a transaction of its own.
 */
export function declareClaim<In>(declaration: {
  sqlite: string | ClaimOnSqlite<In>;
  postgres?: TurnStatement;
  values?: (input: In) => readonly unknown[];
  max?: number;
  lost?: (error: unknown) => boolean;
}): DeclaredClaim<In> {
  const values = declaration.values ?? (() => {
    throw new Error('a claim run by its statements needs the values of its calls');
  });
  return { sqlite: declaration.sqlite, postgres: declaration.postgres ?? null, values, max: declaration.max ?? MAX_TURN_CALLS, lost: declaration.lost ?? null };
}

/**
 * Whether a claim's error means it lost: only once it runs alone — in a group or a batch, the error
 * is any claim's, and batchedCalls runs each alone to find whose (./batched-calls.ts).
 */
export function lostAlone(lost: DeclaredClaim<never>['lost'], calls: number, error: unknown): boolean {
  return calls === 1 && lost !== null && lost(error);
}

/** What a store asks of the executor of either dialect. */
export interface DeclaredStatements {
  /** The read's answer for the call's parameters: its first row, decoded; undefined when none. */
  reader<Params extends readonly unknown[], Out>(read: DeclaredRead<Params, Out>): (...params: Params) => Promise<Out | undefined>;
  writer<Params extends readonly unknown[]>(write: DeclaredWrite<Params>): (...params: Params) => Promise<void>;
  /** True when the call claimed; answered once the claim has committed. */
  claimer<In>(claim: DeclaredClaim<In>): (input: In) => Promise<boolean>;
}
