/** The day rows of every series metric on SQLite (what they are: ../series-days.ts). */
import type { SqliteExecutor } from '../../db/executor.js';
import { EXACT_TOTAL, NOT_READ, type DayDetail, type DayReader, type DayRow } from '../series-days.js';

/** The days of one user and metric in a range: its four parameters are the user, the metric, from and to. */
const RANGE = 'from series_days where user_id = ? and metric = ? and day_start >= ? and day_start < ?';

const SQL: Readonly<Record<DayDetail, string>> = {
  totals: `select day_start, total ${RANGE} order by day_start`,
  hours: `select day_start, total, hours ${RANGE} order by day_start`,
  minutes: `select day_start, total, hours, minutes ${RANGE} order by day_start`,
};

/**
 * Prepared statements: a range of the primary key, the metric a parameter. They are prepared at the
 * first read, as the stores may be made before the migrations ran. Integers are bound as BigInt,
 * since better-sqlite3 binds a JS number as REAL and the key holds integers; a metric with an
 * EXACT_TOTAL gets its integers back as BigInt too. Each read runs with the other reads of its
 * event-loop turn (the bearer checks) in one read transaction (db/sqlite-executor.ts): read alone,
 * the 30-day series of `npm run bench` cost about 25 µs more a request (performance.md, November 26). Rows come as arrays (raw
 * mode), made into objects here: building a row object through V8's API, a property at a time,
 * costs more.
 */
export function sqliteDays(executor: SqliteExecutor): DayReader {
  return (userId, metric, from, to, detail) =>
    executor.read((connection) => {
      const exact = EXACT_TOTAL[metric];
      const statement = connection.statement(SQL[detail], exact ? 'raw-bigints' : 'raw');
      const arrays = statement.all(userId, metric, BigInt(from), BigInt(to)) as Array<[number | bigint, number | bigint, Uint8Array?, Uint8Array?]>;
      const rows: DayRow[] = new Array(arrays.length);
      for (let i = 0; i < arrays.length; i++) {
        const row = arrays[i]!;
        rows[i] = { day_start: row[0], total: row[1], hours: row[2] ?? NOT_READ, minutes: row[3] ?? NOT_READ };
      }
      return rows;
    });
}
