/** The day rows of step series on PostgreSQL (the sums: ../step-series.ts). */
import type pg from 'pg';
import type { DayReader, DayRow } from '../step-series.js';

/** One statement prepared by name on each connection: a range of the primary key. */
export function postgresDays(pool: pg.Pool): DayReader {
  return async (userId, from, to) => {
    const result = await pool.query<DayRow>({
      name: 'stride_series_days_steps',
      text: `select day_start, total, hours, minutes from series_days
             where user_id = $1 and metric = 'steps' and day_start >= $2 and day_start < $3 order by day_start`,
      values: [userId, from, to],
    });
    return result.rows;
  };
}
