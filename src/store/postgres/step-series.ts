/** The day rows of step series on PostgreSQL (the sums: ../step-series.ts). */
import type pg from 'pg';
import type { DayDetail, DayReader, DayRow } from '../step-series.js';

/** What is not needed is sent as an empty bytea, which costs no detoasting. */
const COLUMNS: Readonly<Record<DayDetail, string>> = {
  totals: `day_start, total, ''::bytea as hours, ''::bytea as minutes`,
  hours: `day_start, total, hours, ''::bytea as minutes`,
  minutes: 'day_start, total, hours, minutes',
};

/** Statements prepared by name on each connection, one per detail: a range of the primary key. */
export function postgresDays(pool: pg.Pool): DayReader {
  return async (userId, from, to, detail) => {
    const result = await pool.query<DayRow>({
      name: `stride_series_days_steps_${detail}`,
      text: `select ${COLUMNS[detail]} from series_days
             where user_id = $1 and metric = 'steps' and day_start >= $2 and day_start < $3 order by day_start`,
      values: [userId, from, to],
    });
    return result.rows;
  };
}
