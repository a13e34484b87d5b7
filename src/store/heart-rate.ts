/**
 * Heart rate in the series store (db/codec/heart-rate-minutes.ts): an upload merges its minutes into the UTC
 * days they fall in — read, replaced minute by minute, packed and written back — and a delete
 * clears a range of minutes, each in one transaction that first takes the user's lock
 * (store/owner-lock.ts) and records heartrate.updated, so two writes to one day run one after the
 * other and neither loses the other's minutes.
 */
import type { Kysely } from 'kysely';
import type { Db } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { DAY_SECONDS, MINUTES_PER_DAY, dayStartOf } from '../db/codec/day.js';
import { emptyHeartRateDay, minutesWithData, unpackHeartRateMinutes, type HeartRateMinutes } from '../db/codec/heart-rate-minutes.js';
import { packHeartRateDay } from '../db/codec/heart-rate-summary.js';
import { lowestHalfHour } from '../domain/resting-heart-rate.js';
import { recordEvent } from './events.js';
import type { HeartRateDayReader } from './heart-rate-series.js';
import { withOwnerLocked } from './owner-lock.js';
import { daysFrom, deleteDayRows, readDayRows, writeDayRows } from './series-rows.js';
import { noteImportSteps, type ImportPart, type PendingChange, type StepNote } from './takeout-imports.js';
import type { ChangeOfMinutes, FillOutcome, SeriesChange } from './minute-series.js';

/** The range of a reading, in beats per minute (docs/api.md, "Heart-rate upload"). */
export { MAX_BPM, MIN_BPM } from '../db/codec/heart-rate-minutes.js';

const METRIC = 'heartrate' as const;

/**
 * One minute of heart rate (docs/api.md): the minute's start in Unix seconds, and its readings'
 * avg, min and max.
 */
export interface HeartRateMinute {
  start_time: number;
  avg: number;
  min: number;
  max: number;
}

export interface HeartRateStore {
  /** Stores the minutes (each replaces what its minute held) and the event of `change`, in one transaction. */
  upsertMinutes(userId: string, minutes: readonly HeartRateMinute[], change: SeriesChange): Promise<void>;
  /**
   * Removes the minutes starting in [from, to) and, when any held data, records the event that
   * `change` makes of the minutes removed; returns those minutes' starts.
   */
  deleteMinutes(userId: string, from: number, to: number, change: ChangeOfMinutes): Promise<number[]>;
  /**
   * An import's minutes (store/takeout-imports.ts), a step's or several steps' in their order:
   * writes those the person holds nothing for yet and keeps the others as stored (a device's
   * minute wins), then notes each step with the change `changeOf(the starts it wrote)`, in one
   * transaction, each day row written once. Records no event of its own. Returns what each step's
   * write did.
   */
  fillMinutes(userId: string, parts: ReadonlyArray<ImportPart<HeartRateMinute>>, changeOf: (written: readonly number[]) => PendingChange): Promise<FillOutcome[]>;
  /** The day rows of a series (store/heart-rate-series.ts). */
  readDays: HeartRateDayReader;
  /** The user's minutes after `afterMinute` (exclusive), in order, at most `limit`: one page of an export. */
  minutesAfter(userId: string, afterMinute: number, limit: number): Promise<HeartRateMinute[]>;
}

export function createHeartRateStore(db: Db, readDays: HeartRateDayReader): HeartRateStore {
  return {
    async upsertMinutes(userId, minutes, change) {
      if (minutes.length === 0) return;
      await withOwnerLocked(db, { table: 'users', id: userId }, async (trx) => {
        const days = await storedDays(trx, userId, [...new Set(minutes.map((minute) => dayStartOf(minute.start_time)))]);
        for (const minute of minutes) {
          const start = dayStartOf(minute.start_time);
          let day = days.get(start);
          if (!day) days.set(start, (day = emptyHeartRateDay()));
          const m = (minute.start_time - start) / 60;
          day.avg[m] = minute.avg;
          day.min[m] = minute.min;
          day.max[m] = minute.max;
        }
        await writeDays(trx, userId, days);
        await recordChange(trx, userId, change);
      });
    },
    async fillMinutes(userId, parts, changeOf) {
      return withOwnerLocked(db, { table: 'users', id: userId }, async (trx) => {
        const days = await storedDays(trx, userId, [...new Set(parts.flatMap((part) => part.records.map((minute) => dayStartOf(minute.start_time))))]);
        const changed = new Map<number, HeartRateMinutes>();
        const notes: StepNote[] = parts.map(({ records, step }) => {
          const written: number[] = [];
          for (const minute of records) {
            const start = dayStartOf(minute.start_time);
            let day = days.get(start);
            if (!day) days.set(start, (day = emptyHeartRateDay()));
            const m = (minute.start_time - start) / 60;
            if (day.avg[m] !== 0) continue;
            day.avg[m] = minute.avg;
            day.min[m] = minute.min;
            day.max[m] = minute.max;
            written.push(minute.start_time);
            changed.set(start, day);
          }
          written.sort((a, b) => a - b);
          const changes = written.length > 0 ? { 'heartrate.updated': changeOf(written) } : {};
          return { step, outcome: { written: written.length, kept: records.length - written.length, changes } };
        });
        await writeDays(trx, userId, changed);
        await noteImportSteps(trx, notes);
        return notes.map(({ outcome }) => ({ written: outcome.written, kept: outcome.kept }));
      });
    },
    async deleteMinutes(userId, from, to, change) {
      if (to <= from) return [];
      return withOwnerLocked(db, { table: 'users', id: userId }, async (trx) => {
        const stored = await trx
          .selectFrom('series_days')
          .select(['day_start', 'minutes'])
          .where('user_id', '=', userId)
          .where('metric', '=', METRIC)
          .where('day_start', '>', from - DAY_SECONDS)
          .where('day_start', '<', to)
          .execute();
        const removed: number[] = [];
        const changed = new Map<number, HeartRateMinutes>();
        for (const row of stored) {
          const start = Number(row.day_start);
          const day = unpackHeartRateMinutes(row.minutes);
          for (let m = 0; m < MINUTES_PER_DAY; m++) {
            const time = start + m * 60;
            if (time < from || time >= to || day.avg[m] === 0) continue;
            day.avg[m] = day.min[m] = day.max[m] = 0;
            removed.push(time);
          }
          if (removed.length > 0) changed.set(start, day);
        }
        if (removed.length === 0) return removed;
        removed.sort((a, b) => a - b);
        await writeDays(trx, userId, changed);
        await recordChange(trx, userId, change(removed));
        return removed;
      });
    },
    readDays,
    async minutesAfter(userId, afterMinute, limit) {
      const found: HeartRateMinute[] = [];
      for await (const row of daysFrom(db.kysely, userId, METRIC, afterMinute)) {
        const day = unpackHeartRateMinutes(row.minutes);
        for (let m = 0; m < MINUTES_PER_DAY && found.length < limit; m++) {
          const start_time = row.day_start + m * 60;
          if (day.avg[m] !== 0 && start_time > afterMinute) found.push({ start_time, avg: day.avg[m]!, min: day.min[m]!, max: day.max[m]! });
        }
        if (found.length >= limit) break;
      }
      return found;
    },
  };
}

async function recordChange(trx: Kysely<Database>, userId: string, change: SeriesChange): Promise<void> {
  const { ranges, dates, now, coalesceSeconds } = change;
  await recordEvent(trx, { type: 'heartrate.updated', userId, data: { ranges, dates }, now }, coalesceSeconds);
}

/** The stored days among `starts`, unpacked. */
async function storedDays(trx: Kysely<Database>, userId: string, starts: number[]): Promise<Map<number, HeartRateMinutes>> {
  const rows = await readDayRows(trx, userId, METRIC, starts);
  return new Map(rows.map((row) => [row.day_start, unpackHeartRateMinutes(row.minutes)]));
}

/** Writes the days back; a day left with no minute is deleted. */
async function writeDays(trx: Kysely<Database>, userId: string, days: Map<number, HeartRateMinutes>): Promise<void> {
  const empty: number[] = [];
  const rows = [];
  for (const [day_start, minutes] of days) {
    if (minutesWithData(minutes) === 0) empty.push(day_start);
    else rows.push({ day_start, ...packHeartRateDay(minutes, lowestHalfHour) });
  }
  await writeDayRows(trx, userId, METRIC, rows);
  await deleteDayRows(trx, userId, METRIC, empty);
}
