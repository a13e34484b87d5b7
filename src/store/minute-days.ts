/**
 * A person's minutes of steps, heart rate and calories over UTC days, unpacked from the day rows of the
 * series store (db/codec/minute-values.ts, db/codec/heart-rate-minutes.ts), with the spans of their sleep sessions: what the
 * rules that look at each minute (domain/daily-activity.ts) read. The daily summary's reads give
 * the rows (store/daily-summary.ts).
 *
 * Unpacking is most of the cost of those rules — inflating and decoding a day of steps and a day
 * of heart rate took about 40 µs against about 15 µs for counting its minutes — and a summary of
 * the last 30 days asks for the same days again and again. So the unpacked days are kept per
 * person, kind and day with the packed bytes they came from, and a day read again with the same
 * bytes is not unpacked again. Nothing is invalidated, so no write can leave a stale day behind: a
 * changed day has other bytes. Bounded by the bytes kept, least recently used first out.
 *
 * The days kept are a speed mechanism (switch `minute-days`, src/speed-switches.ts) needed by row
 * 10 of `npm run bench` (the daily summary of 30 days); the plain path (PLAIN_MINUTE_DAYS) unpacks
 * every day read; test/fuzz/speed-caches shows both give the same minutes.
 */
import { ABSENT, unpackMinutes } from '../db/codec/minute-values.js';
import { isOn } from '../speed-switches.js';
import { unpackHeartRateAverages } from '../db/codec/heart-rate-minutes.js';

/** A minute with no steps stored, in `MinuteDays.steps`. */
export const NO_STEPS = ABSENT;

/** A minute with no calories stored, in `MinuteDays.calories`. */
export const NO_CALORIES = ABSENT;

/** When a sleep session began and ended ([start_time, end_time), Unix seconds). */
export interface SleepSpan {
  start_time: number;
  end_time: number;
}

/** Minutes of UTC days. The arrays may be shared with other reads: never modify them. */
export interface MinuteDays {
  /** By UTC day start: each minute's steps, or NO_STEPS. A day without a row is absent. */
  steps: ReadonlyMap<number, ArrayLike<number>>;
  /** By UTC day start: each minute's average heart rate, or 0 (no reading). A day without a row is absent. */
  heartRate: ReadonlyMap<number, ArrayLike<number>>;
  /** By UTC day start: each minute's calories in tenths of a kcal, or NO_CALORIES. A day without a row is absent. */
  calories: ReadonlyMap<number, ArrayLike<number>>;
  /** The sleep sessions that may cover a minute of the days read, by start (sessions never overlap). */
  sleep: readonly SleepSpan[];
}

/** A day row with its packed minutes, as the day reader gives it (store/series-days.ts). */
export interface MinuteRow {
  day_start: number | bigint | string;
  minutes: Uint8Array;
}

/** About 3,700 person-days of steps and heart rate (fewer with calories), per process. */
export const MAX_KEPT_MINUTE_BYTES = 16 * 1024 * 1024;

export interface KeptMinuteDays {
  /** The minutes of `userId`'s rows of steps, heart rate and calories, and the sleep spans (sorted here by start). */
  daysOf(userId: string, stepRows: readonly MinuteRow[], heartRateRows: readonly MinuteRow[], calorieRows: readonly MinuteRow[], sleep: SleepSpan[]): MinuteDays;
  /** Bytes kept (unpacked days and the packed bytes beside them). */
  readonly bytes: number;
}

interface Kept {
  packed: Uint8Array;
  minutes: ArrayLike<number>;
  size: number;
}

/** Bytes of a kept day beyond its arrays: its key, the entry and the map's slot, roughly. */
const ENTRY_OVERHEAD = 160;

/** Steps of a day in 16 bits (at most 1,000 a minute, NO_STEPS −1): half the memory of the unpacked day. */
const unpackSteps = (packed: Uint8Array) => Int16Array.from(unpackMinutes(packed));

/** Calories of a day in tenths of a kcal, as stored (NO_CALORIES −1). */
const unpackCalories = (packed: Uint8Array) => unpackMinutes(packed);

export function keptMinuteDays(maxBytes = MAX_KEPT_MINUTE_BYTES): KeptMinuteDays {
  // A Map iterates in insertion order: a day found is moved to the end, the first is the oldest.
  const kept = new Map<string, Kept>();
  let bytes = 0;

  function dayOf(key: string, packed: Uint8Array, unpack: (packed: Uint8Array) => ArrayLike<number> & { byteLength: number }): ArrayLike<number> {
    const found = kept.get(key);
    if (found !== undefined) {
      kept.delete(key);
      if (found.packed.length === packed.length && Buffer.compare(found.packed, packed) === 0) {
        kept.set(key, found);
        return found.minutes;
      }
      bytes -= found.size;
    }
    const minutes = unpack(packed);
    const size = minutes.byteLength + packed.length + ENTRY_OVERHEAD;
    if (size > maxBytes) return minutes;
    // A copy of its own: the bytes read may be a slice of a larger pooled buffer, kept alive with them.
    kept.set(key, { packed: new Uint8Array(packed), minutes, size });
    bytes += size;
    for (const [oldest, day] of kept) {
      if (bytes <= maxBytes) break;
      kept.delete(oldest);
      bytes -= day.size;
    }
    return minutes;
  }

  function unpackedDays(userId: string, kind: string, rows: readonly MinuteRow[], unpack: (packed: Uint8Array) => ArrayLike<number> & { byteLength: number }) {
    const days = new Map<number, ArrayLike<number>>();
    for (const row of rows) {
      const day = Number(row.day_start);
      days.set(day, dayOf(`${userId} ${kind} ${day}`, row.minutes, unpack));
    }
    return days;
  }

  return {
    daysOf(userId, stepRows, heartRateRows, calorieRows, sleep) {
      return {
        steps: unpackedDays(userId, 'steps', stepRows, unpackSteps),
        heartRate: unpackedDays(userId, 'heartrate', heartRateRows, unpackHeartRateAverages),
        calories: unpackedDays(userId, 'calories', calorieRows, unpackCalories),
        sleep: sleep.sort((a, b) => a.start_time - b.start_time),
      };
    },
    get bytes() {
      return bytes;
    },
  };
}

/** The plain path: every day unpacked from its bytes, nothing kept. */
export const PLAIN_MINUTE_DAYS: KeptMinuteDays = {
  daysOf(_userId, stepRows, heartRateRows, calorieRows, sleep) {
    const unpacked = (rows: readonly MinuteRow[], unpack: (packed: Uint8Array) => ArrayLike<number>) => new Map(rows.map((row) => [Number(row.day_start), unpack(row.minutes)]));
    return {
      steps: unpacked(stepRows, unpackSteps),
      heartRate: unpacked(heartRateRows, unpackHeartRateAverages),
      calories: unpacked(calorieRows, unpackCalories),
      sleep: sleep.sort((a, b) => a.start_time - b.start_time),
    };
  },
  bytes: 0,
};

/** The days a summary store keeps, or none when STRIDE_PLAIN switches them off. */
export function switchedMinuteDays(): KeptMinuteDays {
  return isOn('minute-days') ? keptMinuteDays() : PLAIN_MINUTE_DAYS;
}
