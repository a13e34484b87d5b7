/** What the series store holds (db/codec/minute-values.ts), unpacked, for tests that look at the stored rows. */
import type { Kysely } from 'kysely';
import type { Database } from '../../src/db/schema.js';
import { ABSENT, emptyDay, packDay, unpackHours, unpackMinutes } from '../../src/db/codec/minute-values.js';
import { dayStartOf } from '../../src/db/codec/day.js';

export interface StoredMinute {
  minute_start: number;
  value: number;
}

interface DayRowLike {
  day_start: number | string | bigint;
  minutes: Uint8Array;
}

/** The present minutes of stored day rows, in order. */
export function minutesOfDays(rows: readonly DayRowLike[]): StoredMinute[] {
  const minutes: StoredMinute[] = [];
  for (const row of [...rows].sort((a, b) => Number(a.day_start) - Number(b.day_start))) {
    const values = unpackMinutes(row.minutes);
    values.forEach((value, m) => {
      if (value !== ABSENT) minutes.push({ minute_start: Number(row.day_start) + m * 60, value });
    });
  }
  return minutes;
}

/** A user's stored step minutes in [from, to), in order. */
export async function storedStepMinutes(db: Kysely<Database>, userId: string, from = 0, to = Number.MAX_SAFE_INTEGER): Promise<StoredMinute[]> {
  const rows = await db.selectFrom('series_days').select(['day_start', 'minutes']).where('user_id', '=', userId).where('metric', '=', 'steps').execute();
  return minutesOfDays(rows).filter((m) => m.minute_start >= from && m.minute_start < to);
}

/** Each stored step day of a user: its total and hourly sums as stored, and as its minutes add up. */
export async function storedStepDays(db: Kysely<Database>, userId: string) {
  const rows = await db.selectFrom('series_days').selectAll().where('user_id', '=', userId).where('metric', '=', 'steps').orderBy('day_start').execute();
  return rows.map((row) => {
    const minutes = unpackMinutes(row.minutes);
    const hours = Array.from({ length: 24 }, (_, h) => minutes.slice(h * 60, h * 60 + 60).reduce((sum, v) => sum + (v === ABSENT ? 0 : v), 0));
    return {
      day_start: Number(row.day_start),
      total: Number(row.total),
      hours: unpackHours(row.hours),
      minutesTotal: hours.reduce((a, b) => a + b, 0),
      minutesHours: hours,
    };
  });
}

/** Day rows for the minutes `first + i * 60` (i < count) with values valueAt(i), ready to insert. */
export function packedStepDays(userId: string, first: number, count: number, valueAt: (i: number) => number) {
  const rows: Array<Database['series_days'] & { metric: 'steps' }> = [];
  let day = dayStartOf(first);
  let minutes = emptyDay();
  const close = () => rows.push({ user_id: userId, metric: 'steps', day_start: day, ...packDay(minutes) });
  for (let i = 0; i < count; i++) {
    const t = first + i * 60;
    if (dayStartOf(t) !== day) {
      close();
      day = dayStartOf(t);
      minutes = emptyDay();
    }
    minutes[(t - day) / 60] = valueAt(i);
  }
  close();
  return rows;
}
