/**
 * Reading and writing whole day rows of the series store (db/codec/minute-values.ts) inside a write
 * transaction: what the writers of every minute metric share.
 */
import type { Kysely } from 'kysely';
import type { Database, SeriesMetric } from '../db/schema.js';
import { DAY_SECONDS, dayStartOf } from '../db/codec/day.js';

/** Days per SELECT or INSERT (6 parameters per row written). */
const DAY_CHUNK = 500;
/** Days read per query of an export page. */
const EXPORT_DAYS = 8;

export interface StoredDay {
  day_start: number;
  minutes: Uint8Array;
}

/** The stored days of `metric` among `dayStarts`, with their packed minutes. */
export async function readDayRows(trx: Kysely<Database>, userId: string, metric: SeriesMetric, dayStarts: readonly number[]): Promise<StoredDay[]> {
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

/** A day row as written: its sums (heart rate: its aggregates, a 58-bit total) and packed minutes. */
export interface DayRowValues {
  day_start: number;
  total: number | bigint;
  hours: Uint8Array;
  minutes: Uint8Array;
}

/** Inserts the rows, or replaces the sums and minutes of those that exist. */
export async function writeDayRows(trx: Kysely<Database>, userId: string, metric: SeriesMetric, days: readonly DayRowValues[]): Promise<void> {
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

export async function deleteDayRows(trx: Kysely<Database>, userId: string, metric: SeriesMetric, dayStarts: readonly number[]): Promise<void> {
  for (let i = 0; i < dayStarts.length; i += DAY_CHUNK) {
    await trx.deleteFrom('series_days').where('user_id', '=', userId).where('metric', '=', metric).where('day_start', 'in', dayStarts.slice(i, i + DAY_CHUNK)).execute();
  }
}

/**
 * The stored days of `metric` from the one holding `afterMinute` on, in order, a few per query:
 * what an export pages through, taking as many as it needs.
 */
export async function* daysFrom(db: Kysely<Database>, userId: string, metric: SeriesMetric, afterMinute: number): AsyncGenerator<StoredDay> {
  let from = dayStartOf(afterMinute);
  for (;;) {
    const rows = await db
      .selectFrom('series_days')
      .select(['day_start', 'minutes'])
      .where('user_id', '=', userId)
      .where('metric', '=', metric)
      .where('day_start', '>=', from)
      .orderBy('day_start')
      .limit(EXPORT_DAYS)
      .execute();
    for (const row of rows) yield { day_start: Number(row.day_start), minutes: row.minutes };
    if (rows.length < EXPORT_DAYS) return;
    from = Number(rows[rows.length - 1]!.day_start) + DAY_SECONDS;
  }
}
