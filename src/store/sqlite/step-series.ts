/** The day rows of step series on SQLite (the sums: ../step-series.ts). */
import type SQLite from 'better-sqlite3';
import type { Statement } from 'better-sqlite3';
import type { DayReader, DayRow } from '../step-series.js';

/**
 * One prepared statement, run synchronously: a range of the clustered primary key. It is prepared
 * at the first read, as the stores may be made before the migrations ran. Integers are bound as
 * BigInt, since better-sqlite3 binds a JS number as REAL and the key holds integers.
 */
export function sqliteDays(sqlite: SQLite.Database): DayReader {
  let statement: Statement | undefined;
  return (userId, from, to) => {
    statement ??= sqlite.prepare(
      `select day_start, total, hours, minutes from series_days
       where user_id = ? and metric = 'steps' and day_start >= ? and day_start < ? order by day_start`,
    );
    return statement.all(userId, BigInt(from), BigInt(to)) as DayRow[];
  };
}
