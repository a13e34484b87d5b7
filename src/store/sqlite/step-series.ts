/** Series queries on SQLite (the queries themselves: ../step-series.ts). */
import type SQLite from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import { sqliteTurnReads } from '../../db/sqlite-turn-reads.js';
import { MAX_PREPARED_SHAPES, sumsOf, TIME_COLUMNS, withUser, type SeriesQuery, type SumsOfPlanMaker } from '../step-series.js';

/**
 * On SQLite the rows come back as ONE JSON text of one array per column, `[[t…],[value…]]`:
 * better-sqlite3 (on Node 20) stores each value of each row into its JS array through V8's
 * generic property store, and JSON.parse builds the arrays natively. Instants are sent relative to
 * the series start (the first value bound), so that every number is a small integer,
 * cheaper to print and to parse. For 30 rows: 16 µs as rows, 7 µs as one text of integers
 * separated by commas, 4.5 µs as this (docs/api.md).
 */
function asColumnsText(query: SeriesQuery): string {
  const time = timeColumnOf(query.columns);
  const arrays = query.columns.map((column, c) =>
    c === time ? `json_group_array(${column} - cast(? as integer))` : `json_group_array(${column})`,
  );
  // The series start is bound once, before the query's values.
  return `select json_array(${arrays.join(', ')}) from (${query.text})`;
}

/** The index of the one column of a series query that holds an instant. */
export function timeColumnOf(columns: readonly string[]): number {
  const found = columns.flatMap((column, c) => (TIME_COLUMNS.has(column) ? [c] : []));
  if (found.length !== 1) throw new Error(`a series query needs exactly one time column, got ${columns.join(', ')}`);
  return found[0]!;
}

/** The columns of asColumnsText's JSON, the instants of column `time` made absolute again. */
export function columnsFromJson(json: string, time: number, start: number): number[][] {
  const parsed = JSON.parse(json) as number[][];
  const times = parsed[time]!;
  for (let row = 0; row < times.length; row++) times[row]! += start;
  return parsed;
}

export function sqliteSums(sqlite: SQLite.Database): SumsOfPlanMaker {
  const statements = new Map<string, Statement>();
  const turnRead = sqliteTurnReads(sqlite);
  return (plan, shape) => {
    let statement = statements.get(shape.text);
    if (statement === undefined) {
      statement = sqlite.prepare(asColumnsText(shape)).pluck(true);
      if (statements.size < MAX_PREPARED_SHAPES) statements.set(shape.text, statement);
    }
    const prepared = statement;
    const start = plan.boundaries[0]!;
    const time = timeColumnOf(shape.columns);
    return (userId) => {
      const values = withUser(shape.values, userId);
      // With the other reads of the turn, in one read transaction.
      return turnRead(() => sumsOf(plan, shape, columnsFromJson(prepared.get(start, ...values) as string, time, start)));
    };
  };
}
