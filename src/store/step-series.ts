/**
 * Summing stored steps into local-clock buckets from the day rows of the series store
 * (db/series-day.ts): one indexed range read of the user's days per series, whatever the range,
 * then per day the coarsest stored sum that no bucket boundary cuts through — the day's total
 * (a daily series in UTC), else each hour's sum (days in Europe/Berlin, hourly series), else, only
 * for an hour that a boundary cuts (days in Asia/Kolkata, minute series), its minutes.
 *
 * A boundary that is not a whole UTC minute (historic local mean time offsets) counts each minute
 * in the bucket where it starts.
 */
import { lastIndexAtOrBefore, type BucketPlan } from '../calendar/step-buckets.js';
import { ABSENT, DAY_SECONDS, dayStartOf, unpackHours, unpackMinutes } from '../db/series-day.js';

/** A stored day as its readers get it. PostgreSQL sends bigints as text. */
export interface DayRow {
  day_start: number | string;
  total: number | string;
  hours: Uint8Array;
  minutes: Uint8Array;
}

/** The user's step days with day_start in [from, to), by day_start. */
export type DayReader = (userId: string, from: number, to: number) => DayRow[] | Promise<DayRow[]>;

/**
 * `writtenAt`: where the user's latest upload left the database, for a replica to have replayed
 * before it answers (store/replica.ts).
 */
export type StepSums = (userId: string, plan: BucketPlan, writtenAt?: string | null) => number[] | Promise<number[]>;

export function createStepSums(readDays: DayReader): StepSums {
  return (userId, plan) => {
    const { boundaries } = plan;
    if (boundaries.length < 2) return [];
    const rows = readDays(userId, dayStartOf(boundaries[0]!), boundaries[boundaries.length - 1]!);
    return Array.isArray(rows) ? sumsFromDays(boundaries, rows) : rows.then((found) => sumsFromDays(boundaries, found));
  };
}

/** Step sums per bucket index of `boundaries` (missing index: no steps) from the days holding them. */
export function sumsFromDays(boundaries: readonly number[], rows: readonly DayRow[]): number[] {
  const buckets = boundaries.length - 1;
  const sums: number[] = [];
  const add = (index: number, value: number) => {
    if (index >= 0 && index < buckets && value !== 0) sums[index] = (sums[index] ?? 0) + value;
  };
  const bucketOf = (t: number) => lastIndexAtOrBefore(boundaries, t);
  for (const row of rows) {
    const day = Number(row.day_start);
    const first = bucketOf(day);
    if (first === bucketOf(day + DAY_SECONDS - 1)) {
      add(first, Number(row.total));
      continue;
    }
    const hours = unpackHours(row.hours);
    let minutes: Int32Array | undefined;
    for (let hour = 0; hour < 24; hour++) {
      const start = day + hour * 3600;
      const bucket = bucketOf(start);
      if (bucket === bucketOf(start + 3599)) {
        add(bucket, hours[hour]!);
        continue;
      }
      minutes ??= unpackMinutes(row.minutes);
      for (let m = hour * 60; m < hour * 60 + 60; m++) {
        const value = minutes[m]!;
        if (value !== ABSENT) add(bucketOf(day + m * 60), value);
      }
    }
  }
  return sums;
}
