/** The day rows of heart-rate series on SQLite (the buckets: ../heart-rate-series.ts). */
import type { SqliteExecutor } from '../../db/executor.js';
import { fillUnreadColumns, type DayDetail } from '../series-sums.js';
import type { HeartRateDayReader, HeartRateDayRow } from '../heart-rate-series.js';

const COLUMNS: Readonly<Record<DayDetail, string>> = {
  totals: 'day_start, total',
  hours: 'day_start, total, hours',
  minutes: 'day_start, total, hours, minutes',
};

const SQL = Object.fromEntries(
  Object.entries(COLUMNS).map(([detail, columns]) => [
    detail,
    `select ${columns} from series_days where user_id = ? and metric = 'heartrate' and day_start >= ? and day_start < ? order by day_start`,
  ]),
) as Readonly<Record<DayDetail, string>>;

/**
 * Kept once prepared, as steps are (./series-days.ts), read with the other reads of the turn on the
 * read connection (db/sqlite-executor.ts).
 * Integers come back as BigInt: a heart-rate total has 58 bits (db/codec/heart-rate-summary.ts).
 */
export function sqliteHeartRateDays(executor: SqliteExecutor): HeartRateDayReader {
  return (userId, from, to, detail) =>
    executor.read((connection) => {
      const statement = connection.statement<HeartRateDayRow>(SQL[detail], 'bigints');
      const rows = statement.all(userId, BigInt(from), BigInt(to));
      fillUnreadColumns(rows, detail);
      return rows;
    });
}
