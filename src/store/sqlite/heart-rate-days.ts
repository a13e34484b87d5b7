/** The day rows of heart-rate series on SQLite (the buckets: ../heart-rate-series.ts). */
import type SQLite from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import { sqliteTurnReads } from '../../db/sqlite-turn-reads.js';
import { fillUnreadColumns, type DayDetail } from '../series-sums.js';
import type { HeartRateDayReader, HeartRateDayRow } from '../heart-rate-series.js';

const COLUMNS: Readonly<Record<DayDetail, string>> = {
  totals: 'day_start, total',
  hours: 'day_start, total, hours',
  minutes: 'day_start, total, hours, minutes',
};

/**
 * Prepared at the first read, as steps are (./series-days.ts), in the turn's read transaction.
 * Integers come back as BigInt: a heart-rate total has 58 bits (db/heart-rate-day.ts).
 */
export function sqliteHeartRateDays(sqlite: SQLite.Database): HeartRateDayReader {
  const statements = new Map<DayDetail, Statement>();
  const turnRead = sqliteTurnReads(sqlite);
  const read = (userId: string, from: number, to: number, detail: DayDetail): HeartRateDayRow[] => {
    let statement = statements.get(detail);
    if (statement === undefined) {
      statement = sqlite
        .prepare(`select ${COLUMNS[detail]} from series_days where user_id = ? and metric = 'heartrate' and day_start >= ? and day_start < ? order by day_start`)
        .safeIntegers(true);
      statements.set(detail, statement);
    }
    const rows = statement.all(userId, BigInt(from), BigInt(to)) as HeartRateDayRow[];
    fillUnreadColumns(rows, detail);
    return rows;
  };
  return (userId, from, to, detail) => turnRead(() => read(userId, from, to, detail));
}
