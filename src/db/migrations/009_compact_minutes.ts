/**
 * Minute metrics beyond steps (docs/decisions/0014-minute-metrics.md): the minutes of every stored
 * day get the format byte of db/codec/minute-values.ts and are deflated where that makes them shorter, and
 * each day of steps gets the distance row that its steps derive (db/derived-distance.ts), so that
 * distance series read sums like steps. A page of days at a time, in order of the primary key.
 */
import { sql, type Kysely } from 'kysely';
import { distanceAsRead, hasDistance, strideOf } from '../derived-distance.js';
import { emptyDay, hourSums, packDayWithSums, packMinutes, unpackRuns } from '../codec/minute-values.js';

/** Day rows read per page. */
const PAGE = 1000;
/** Day rows per INSERT: 6 parameters each. */
const INSERT_CHUNK = 500;

interface StepDay {
  user_id: string;
  day_start: number | string;
  total: number | string;
  hours: Uint8Array;
  minutes: Uint8Array;
  stride_length_cm: number | null;
}

export async function up(db: Kysely<any>): Promise<void> {
  let after: { user: string; day: number } | null = null;
  for (;;) {
    let page = db
      .selectFrom('series_days as s')
      .innerJoin('users as u', 'u.id', 's.user_id')
      .select(['s.user_id', 's.day_start', 's.total', 's.hours', 's.minutes', 'u.stride_length_cm'])
      .where('s.metric', '=', 'steps');
    // A row-value comparison over the primary key: a range of it on both databases.
    if (after) page = page.where(sql<boolean>`(s.user_id, s.metric, s.day_start) > (${after.user}, 'steps', ${after.day})`);
    const rows = (await page.orderBy('s.user_id').orderBy('s.day_start').limit(PAGE).execute()) as StepDay[];
    const written: Array<Record<string, unknown>> = [];
    for (const row of rows) {
      const steps = unpackRuns(row.minutes);
      const day_start = Number(row.day_start);
      written.push({ user_id: row.user_id, metric: 'steps', day_start, total: Number(row.total), hours: row.hours, minutes: packMinutes(steps) });
      const distance = distanceAsRead(null, steps, strideOf(row.stride_length_cm));
      if (hasDistance(distance)) written.push({ user_id: row.user_id, metric: 'distance', day_start, ...packDayWithSums(emptyDay(), hourSums(distance)) });
    }
    for (let i = 0; i < written.length; i += INSERT_CHUNK) {
      await db
        .insertInto('series_days')
        .values(written.slice(i, i + INSERT_CHUNK))
        .onConflict((oc) => oc.columns(['user_id', 'metric', 'day_start']).doUpdateSet((eb) => ({ minutes: eb.ref('excluded.minutes') })))
        .execute();
    }
    if (rows.length < PAGE) break;
    const last = rows[rows.length - 1]!;
    after = { user: last.user_id, day: Number(last.day_start) };
  }
}
