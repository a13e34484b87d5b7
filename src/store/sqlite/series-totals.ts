/**
 * The daily totals of a series on SQLite read as ONE text (switch `series-totals`,
 * src/speed-switches.ts): SQLite hands over "day,total,day,total,…", read as a JSON array.
 * better-sqlite3 builds a row object, or an array in raw mode, through V8's API a value at a time,
 * and that cost the 30-day series more than SQLite's walk of the rows (docs/performance.md).
 *
 * What it saves: a row of values built per day. Needed by rows 2 and 16 of `npm run bench` (a
 * 30-day daily series, native and Fitbit-compatible) on SQLite. The plain path (plainTotals) selects
 * the days as rows; test/fuzz/speed-series-totals shows both give the same rows for random days.
 */
import type { SqliteConnection } from '../../db/executor.js';
import { NOT_READ, type DayRow } from '../series-days.js';

/** Reads the days of one user and metric with day_start in [from, to), in day order, their totals only. */
export type TotalsReader = (connection: SqliteConnection, userId: string, metric: string, from: number, to: number) => DayRow[];

/** `range`: `from series_days where …` with the user, the metric and the range as its four parameters. */
export function textTotals(range: string): TotalsReader {
  // The subquery's order is the order the rows are joined in; rowsOfTotals does not rely on it.
  const sql = `select group_concat(day_start || ',' || total) from (select day_start, total ${range} order by day_start)`;
  // Integers are bound as BigInt: better-sqlite3 binds a JS number as REAL, and the key holds integers.
  return function totalsAsText(connection, userId, metric, from, to) {
    return rowsOfTotals(connection.statement<string | null>(sql, 'pluck').get(userId, metric, BigInt(from), BigInt(to)) ?? null);
  };
}

/** The plain path: the days selected as rows (raw mode, an array of values each). */
export function plainTotals(range: string): TotalsReader {
  const sql = `select day_start, total ${range} order by day_start`;
  return function totalsAsRows(connection, userId, metric, from, to) {
    const arrays = connection.statement(sql, 'raw').all(userId, metric, BigInt(from), BigInt(to)) as Array<[number, number]>;
    return arrays.map(([day_start, total]) => ({ day_start, total, hours: NOT_READ, minutes: NOT_READ }));
  };
}

/** The rows of the totals' text (null: no day), in day order. */
export function rowsOfTotals(text: string | null): DayRow[] {
  if (text === null) return [];
  const numbers = JSON.parse(`[${text}]`) as number[];
  const rows: DayRow[] = new Array(numbers.length / 2);
  let ordered = true;
  for (let i = 0; i < rows.length; i++) {
    const day_start = numbers[2 * i]!;
    rows[i] = { day_start, total: numbers[2 * i + 1]!, hours: NOT_READ, minutes: NOT_READ };
    if (i > 0 && day_start < (rows[i - 1]!.day_start as number)) ordered = false;
  }
  return ordered ? rows : rows.sort((a, b) => (a.day_start as number) - (b.day_start as number));
}
