/** The day rows of every series metric on PostgreSQL (what they are: ../series-days.ts). */
import type pg from 'pg';
import { batchedCalls } from '../../db/batched-calls.js';
import { NOT_READ, type DayDetail, type DayReader, type DayRow } from '../series-days.js';
import { unnestedParameters } from './kept-plans.js';

/** Series read in one statement at most; more start the next one at once. */
const MAX_BATCH = 256;

/**
 * `total` as text: the pool turns bigints into numbers, and a heart-rate total has 58 bits
 * (../series-days.ts, EXACT_TOTAL); one type for every metric, whose reads share the statement.
 * What is not needed is sent as a null, which costs no detoasting, and becomes NOT_READ here. Not an
 * empty bytea: pg makes a Buffer of each (two objects a column and row), and the rows of a batch
 * live until its last row has arrived — long enough, at the bench's rates, for the collector to move
 * them to the old generation. Empty bytea were 72 % of what a totals row left there (performance.md,
 * "The PostgreSQL process's memory").
 */
const COLUMNS: Readonly<Record<DayDetail, string>> = {
  totals: `s.day_start, s.total::text as total, null::bytea as hours, null::bytea as minutes`,
  hours: `s.day_start, s.total::text as total, s.hours, null::bytea as minutes`,
  minutes: 's.day_start, s.total::text as total, s.hours, s.minutes',
};

/**
 * The series of one event-loop turn are read in ONE statement per detail, whatever their metrics
 * (db/batched-calls.ts, decision 0002): a round trip through pg costs the event loop more than the
 * rows it carries — one statement per series took 204 µs of event loop a request in the 30-day
 * daily series of `npm run bench` against 93 µs batched (performance.md, November 26). Each wanted
 * range is a range of the primary key, by a lateral subquery over the arrays; its OFFSET 0 keeps it
 * from being flattened into a join, which the plan kept for the statement (./kept-plans.ts) could
 * answer with a scan of the table when it was made while the table was nearly empty.
 */
export function postgresDays(pool: pg.Pool): DayReader {
  const readers = { totals: daysOfMany(pool, 'totals'), hours: daysOfMany(pool, 'hours'), minutes: daysOfMany(pool, 'minutes') };
  return (userId, metric, from, to, detail) => readers[detail]({ userId, metric, from, to });
}

function daysOfMany(pool: pg.Pool, detail: DayDetail) {
  const text = `select k.i, ${COLUMNS[detail]}
    from ${unnestedParameters('text', 'text', 'bigint', 'bigint')} with ordinality as k(user_id, metric, day_from, day_to, i)
    cross join lateral (
      select * from series_days d
      where d.user_id = k.user_id and d.metric = k.metric and d.day_start >= k.day_from and d.day_start < k.day_to
      offset 0
    ) s
    order by k.i, s.day_start`;
  return batchedCalls<{ userId: string; metric: string; from: number; to: number }, DayRow[]>(async (calls) => {
    // A packed column not read comes as a null.
    const result = await pool.query<DayRow & { i: string }>({
      name: `stride_series_days_${detail}`,
      text,
      values: [
        calls.map((call) => call.input.userId),
        calls.map((call) => call.input.metric),
        calls.map((call) => call.input.from),
        calls.map((call) => call.input.to),
      ],
    });
    const days: DayRow[][] = calls.map(() => []);
    for (const row of result.rows) {
      (row.hours ??= NOT_READ), (row.minutes ??= NOT_READ);
      days[Number(row.i) - 1]!.push(row);
    }
    calls.forEach((call, index) => call.resolve(days[index]!));
  }, MAX_BATCH);
}
