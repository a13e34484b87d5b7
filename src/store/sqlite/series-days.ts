/** The day rows of minute series on SQLite (the sums: ../series-sums.ts). */
import type SQLite from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import { sqliteTurnReads } from '../../db/sqlite-turn-reads.js';
import { fillUnreadColumns, type DayDetail, type DayReader, type DayRow } from '../series-sums.js';


const COLUMNS: Readonly<Record<DayDetail, string>> = {
  totals: 'day_start, total',
  hours: 'day_start, total, hours',
  minutes: 'day_start, total, hours, minutes',
};

/**
 * Prepared statements: a range of the primary key, the metric a parameter. They are prepared at the
 * first read, as the stores may be made before the migrations ran. Integers are bound as BigInt,
 * since better-sqlite3 binds a JS number as REAL and the key holds integers. Each read runs with
 * the other reads of its event-loop turn (the bearer checks) in one read transaction
 * (db/sqlite-turn-reads.ts): read alone, the 30-day series of `npm run bench` cost about 25 µs more
 * a request (performance.md, November 26).
 */
export function sqliteDays(sqlite: SQLite.Database): DayReader {
  const statements = new Map<DayDetail, Statement>();
  const turnRead = sqliteTurnReads(sqlite);
  const read = (userId: string, metric: string, from: number, to: number, detail: DayDetail): DayRow[] => {
    let statement = statements.get(detail);
    if (statement === undefined) {
      statement = sqlite.prepare(
        `select ${COLUMNS[detail]} from series_days where user_id = ? and metric = ? and day_start >= ? and day_start < ? order by day_start`,
      );
      statements.set(detail, statement);
    }
    const rows = statement.all(userId, metric, BigInt(from), BigInt(to)) as DayRow[];
    fillUnreadColumns(rows, detail);
    return rows;
  };
  return (userId, metric, from, to, detail) => turnRead(() => read(userId, metric, from, to, detail));
}
