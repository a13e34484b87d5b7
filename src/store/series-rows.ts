/**
 * Reading and writing whole day rows of the series store (db/series-day.ts) inside a write
 * transaction: what the writers of every minute metric share.
 */
import type { Kysely } from 'kysely';
import type { Database, SumMetric } from '../db/schema.js';
import type { PackedDay } from '../db/series-day.js';

/** Days per SELECT or INSERT (6 parameters per row written). */
const DAY_CHUNK = 500;

export interface StoredDay {
  day_start: number;
  minutes: Uint8Array;
}

/** The stored days of `metric` among `dayStarts`, with their packed minutes. */
export async function readDayRows(trx: Kysely<Database>, userId: string, metric: SumMetric, dayStarts: readonly number[]): Promise<StoredDay[]> {
  const found: StoredDay[] = [];
  for (let i = 0; i < dayStarts.length; i += DAY_CHUNK) {
    const rows = await trx
      .selectFrom('series_days')
      .select(['day_start', 'minutes'])
      .where('user_id', '=', userId)
      .where('metric', '=', metric)
      .where('day_start', 'in', dayStarts.slice(i, i + DAY_CHUNK))
      .execute();
    for (const row of rows) found.push({ day_start: Number(row.day_start), minutes: row.minutes });
  }
  return found;
}

export type DayRowValues = PackedDay & { day_start: number };

/** Inserts the rows, or replaces the sums and minutes of those that exist. */
export async function writeDayRows(trx: Kysely<Database>, userId: string, metric: SumMetric, days: readonly DayRowValues[]): Promise<void> {
  const rows = days.map((day) => ({ user_id: userId, metric, ...day }));
  for (let i = 0; i < rows.length; i += DAY_CHUNK) {
    await trx
      .insertInto('series_days')
      .values(rows.slice(i, i + DAY_CHUNK))
      .onConflict((oc) =>
        oc.columns(['user_id', 'metric', 'day_start']).doUpdateSet((eb) => ({
          total: eb.ref('excluded.total'),
          hours: eb.ref('excluded.hours'),
          minutes: eb.ref('excluded.minutes'),
        })),
      )
      .execute();
  }
}

export async function deleteDayRows(trx: Kysely<Database>, userId: string, metric: SumMetric, dayStarts: readonly number[]): Promise<void> {
  for (let i = 0; i < dayStarts.length; i += DAY_CHUNK) {
    await trx.deleteFrom('series_days').where('user_id', '=', userId).where('metric', '=', metric).where('day_start', 'in', dayStarts.slice(i, i + DAY_CHUNK)).execute();
  }
}
