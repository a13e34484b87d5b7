/** The day rows of heart-rate series on PostgreSQL (the buckets: ../heart-rate-series.ts). */
import type pg from 'pg';
import { batchedCalls } from '../../db/batched-calls.js';
import { fillUnreadColumns, type DayDetail } from '../series-sums.js';
import type { HeartRateDayReader, HeartRateDayRow } from '../heart-rate-series.js';
import { unnestedParameters } from './kept-plans.js';

/** Series read in one statement at most; more start the next one at once. */
const MAX_BATCH = 256;

/**
 * `total` as text: the pool turns bigints into numbers, and a heart-rate total has 58 bits
 * (db/codec/heart-rate-summary.ts). What is not needed is a null, which costs no detoasting, and becomes one
 * shared empty array here: not an empty bytea, of which pg makes a Buffer per column and row
 * (./series-days.ts says why that matters).
 */
const COLUMNS: Readonly<Record<DayDetail, string>> = {
  totals: `s.day_start, s.total::text as total, null::bytea as hours, null::bytea as minutes`,
  hours: `s.day_start, s.total::text as total, s.hours, null::bytea as minutes`,
  minutes: 's.day_start, s.total::text as total, s.hours, s.minutes',
};

interface DaysWanted {
  userId: string;
  from: number;
  to: number;
}

/** The series of one event-loop turn in one statement per detail, as steps are (./series-days.ts). */
export function postgresHeartRateDays(pool: pg.Pool): HeartRateDayReader {
  const readers = {
    totals: daysOfMany(pool, 'totals'),
    hours: daysOfMany(pool, 'hours'),
    minutes: daysOfMany(pool, 'minutes'),
  } satisfies Record<DayDetail, unknown>;
  return (userId, from, to, detail) => readers[detail]({ userId, from, to });
}

function daysOfMany(pool: pg.Pool, detail: DayDetail) {
  const text = `select k.i, ${COLUMNS[detail]}
    from ${unnestedParameters('text', 'bigint', 'bigint')} with ordinality as k(user_id, day_from, day_to, i)
    cross join lateral (
      select * from series_days d
      where d.user_id = k.user_id and d.metric = 'heartrate' and d.day_start >= k.day_from and d.day_start < k.day_to
      offset 0
    ) s
    order by k.i, s.day_start`;
  return batchedCalls<DaysWanted, HeartRateDayRow[]>(async (calls) => {
    const result = await pool.query<HeartRateDayRow & { i: string }>({
      name: `stride_series_days_heartrate_${detail}`,
      text,
      values: [calls.map((call) => call.input.userId), calls.map((call) => call.input.from), calls.map((call) => call.input.to)],
    });
    const days: HeartRateDayRow[][] = calls.map(() => []);
    fillUnreadColumns(result.rows, detail);
    for (const row of result.rows) days[Number(row.i) - 1]!.push(row);
    calls.forEach((call, index) => call.resolve(days[index]!));
  }, MAX_BATCH);
}
