/**
 * Keeping distance rows in step with what they derive from (db/derived-distance.ts): a write of
 * steps or of uploaded distance rewrites the sums of the distance rows of the days it touches, in
 * its own transaction and under the user's lock (store/owner-lock.ts), so a distance series never
 * reads sums of an older state of either; a change of the stride length rewrites them a page of
 * days at a time (store/stride-changes.ts).
 */
import type { Kysely } from 'kysely';
import { distanceAsRead, hasDistance, strideOf } from '../db/derived-distance.js';
import type { Database } from '../db/schema.js';
import { hourSums, isEmptyDay, packHours, packMinutes, sameMinutes, unpackMinutes, type DayMinutes } from '../db/codec/minute-values.js';
import { deleteDayRows, readDayRows, writeDayRows, type DayRowValues } from './series-rows.js';

/** One UTC day of the metric written, before (null: no row) and after the write. */
export interface DayWrite<Day = DayMinutes> {
  day: number;
  before: Day | null;
  after: Day;
}

async function strideLengthOf(trx: Kysely<Database>, userId: string): Promise<number> {
  const user = await trx.selectFrom('users').select('stride_length_cm').where('id', '=', userId).executeTakeFirst();
  return strideOf(user?.stride_length_cm === undefined || user.stride_length_cm === null ? null : Number(user.stride_length_cm));
}

/**
 * Rewrites the distance rows of the days of `writes`, which wrote `written` (steps, or uploaded
 * distance, whose rows this writes too). Returns the days whose distance as read changed in any minute.
 */
export async function rewriteDistanceDays(trx: Kysely<Database>, userId: string, written: 'steps' | 'distance', writes: readonly DayWrite[]): Promise<number[]> {
  if (writes.length === 0) return [];
  const stride = await strideLengthOf(trx, userId);
  const other = new Map<number, Uint8Array>();
  for (const row of await readDayRows(trx, userId, written === 'steps' ? 'distance' : 'steps', writes.map((w) => w.day))) other.set(row.day_start, row.minutes);
  const keep: DayRowValues[] = [];
  const drop: number[] = [];
  const changed: number[] = [];
  for (const write of writes) {
    const stored = other.get(write.day);
    const unpacked = stored === undefined ? null : unpackMinutes(stored);
    const [uploadedBefore, uploadedAfter, stepsBefore, stepsAfter] =
      written === 'distance' ? [write.before, write.after, unpacked, unpacked] : [unpacked, unpacked, write.before, write.after];
    const before = distanceAsRead(uploadedBefore, stepsBefore, stride);
    const after = distanceAsRead(uploadedAfter, stepsAfter, stride);
    if (!sameMinutes(before, after)) changed.push(write.day);
    const rowExisted = written === 'distance' ? write.before !== null : stored !== undefined;
    if ((uploadedAfter !== null && !isEmptyDay(uploadedAfter)) || hasDistance(after)) {
      const hours = hourSums(after);
      // The uploaded minutes of a steps write are those stored: kept as they are, not packed again.
      const minutes = written === 'distance' ? packMinutes(write.after) : Buffer.from(stored ?? new Uint8Array(0));
      keep.push({ day_start: write.day, total: hours.reduce((a, b) => a + b, 0), hours: packHours(hours), minutes });
    } else if (rowExisted) {
      drop.push(write.day);
    }
  }
  await writeDayRows(trx, userId, 'distance', keep);
  await deleteDayRows(trx, userId, 'distance', drop);
  return changed;
}
