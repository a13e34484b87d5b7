/** The day rows of minute series on SQLite (the sums: ../series-sums.ts). */
import type { SqliteConnection, SqliteExecutor } from '../../db/executor.js';
import { NOT_READ, type DayDetail, type DayReader, type DayRow } from '../series-sums.js';

const RANGE = 'from series_days where user_id = ? and metric = ? and day_start >= ? and day_start < ?';

/**
 * A daily series in UTC needs each day's start and total only: SQLite hands them over as ONE text,
 * "day,total,day,total,…", read as a JSON array. better-sqlite3 builds a row object through V8's
 * API, a property at a time, and that cost the 30-day series more than SQLite's walk of the rows.
 * The subquery's order is the order the rows are joined in; rowsOfTotals does not rely on it.
 */
const TOTALS_SQL = `select group_concat(day_start || ',' || total) from (select day_start, total ${RANGE} order by day_start)`;

const DETAIL_SQL: Readonly<Record<Exclude<DayDetail, 'totals'>, string>> = {
  hours: `select day_start, total, hours ${RANGE} order by day_start`,
  minutes: `select day_start, total, hours, minutes ${RANGE} order by day_start`,
};

/**
 * Prepared statements: a range of the primary key, the metric a parameter. They are prepared at the
 * first read, as the stores may be made before the migrations ran. Integers are bound as BigInt,
 * since better-sqlite3 binds a JS number as REAL and the key holds integers. Each read runs with
 * the other reads of its event-loop turn (the bearer checks) in one read transaction
 * (db/sqlite-executor.ts): read alone, the 30-day series of `npm run bench` cost about 25 µs more
 * a request (performance.md, November 26). Rows with packed columns come as arrays (raw mode), made
 * into objects here, for the reason of TOTALS_SQL.
 */
export function sqliteDays(executor: SqliteExecutor): DayReader {
  const read = (connection: SqliteConnection, userId: string, metric: string, from: number, to: number, detail: DayDetail): DayRow[] => {
    if (detail === 'totals') {
      return rowsOfTotals(connection.statement<string | null>(TOTALS_SQL, 'pluck').get(userId, metric, BigInt(from), BigInt(to)) ?? null);
    }
    const statement = connection.statement(DETAIL_SQL[detail], 'raw');
    const arrays = statement.all(userId, metric, BigInt(from), BigInt(to)) as Array<[number, number, Uint8Array, Uint8Array?]>;
    const rows: DayRow[] = new Array(arrays.length);
    for (let i = 0; i < arrays.length; i++) {
      const row = arrays[i]!;
      rows[i] = { day_start: row[0], total: row[1], hours: row[2], minutes: row[3] ?? NOT_READ };
    }
    return rows;
  };
  return (userId, metric, from, to, detail) => executor.read((connection) => read(connection, userId, metric, from, to, detail));
}

/** The rows of TOTALS_SQL's text (null: no day), in day order. */
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
