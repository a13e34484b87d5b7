/**
 * Summing a stored minute metric into local-clock buckets from the day rows of the series store
 * (db/codec/minute-values.ts), walked by series-walk.ts. Sums are of the stored integers (tenths of
 * a kcal for calories).
 */
import type { BucketPlan } from '../calendar/step-buckets.js';
import { distanceAsRead, strideOf } from '../db/derived-distance.js';
import type { SeriesAccumulator, SumMetric } from '../db/series-metrics.js';
import { ABSENT, unpackHours, unpackMinutes, type DayMinutes } from '../db/codec/minute-values.js';
import { dayDetailFor, daysUnder, type DayReader, type DayRow } from './series-days.js';
import { walkDays } from './series-walk.js';

/**
 * Sums per bucket of a plan (a missing index: nothing in that bucket). `writtenAt`: where the
 * user's latest upload left the database, for a replica to have replayed before it answers
 * (store/replica.ts). `strideCm`: the profile's stride length, for the distance of minutes that
 * only have steps (db/derived-distance.ts); other metrics ignore it.
 */
export type SeriesSums = (userId: string, plan: BucketPlan, writtenAt?: string | null, strideCm?: number | null) => Promise<number[]>;

/** Sums of a metric whose rows hold its own minutes: steps, calories. */
export function createSeriesSums(readDays: DayReader, metric: SumMetric): SeriesSums {
  return async (userId, plan) => sumsFromDays(plan.boundaries, await daysUnder(readDays, userId, metric, plan.boundaries));
}

/**
 * Sums of distance. A distance row's total and hours already count the distance derived from
 * steps (db/derived-distance.ts), so only a series that cuts hours reads the steps rows too.
 */
export function createDistanceSums(readDays: DayReader): SeriesSums {
  return async (userId, { boundaries }, _writtenAt, strideCm) => {
    const detail = dayDetailFor(boundaries);
    const distance = daysUnder(readDays, userId, 'distance', boundaries, detail);
    const steps = detail === 'minutes' ? daysUnder(readDays, userId, 'steps', boundaries, detail) : [];
    return distanceSumsFromDays(boundaries, await distance, await steps, strideCm);
  };
}

/** The sums of each accumulator of a sum metric (db/series-metrics.ts), from a day reader. */
export const SUMS_OF: Readonly<Record<Exclude<SeriesAccumulator, 'heart-rate'>, (readDays: DayReader, metric: SumMetric) => SeriesSums>> = {
  sums: createSeriesSums,
  'derived-distance': createDistanceSums,
};

/**
 * Sums of distance per bucket from its day rows. The minutes of an hour a boundary cuts are those
 * of the distance row and of the steps row of the same day (`stepRows`, read with their minutes
 * whenever an hour is cut), with the profile's stride length. A day with steps and no distance row
 * has only steps that derive nothing (zeros).
 */
export function distanceSumsFromDays(boundaries: readonly number[], distanceRows: readonly DayRow[], stepRows: readonly DayRow[], strideCm?: number | null): number[] {
  const stride = strideOf(strideCm);
  let stepsOfDay: Map<number, Uint8Array> | undefined;
  return sumsFromDays(boundaries, distanceRows, (row) => {
    stepsOfDay ??= new Map(stepRows.map((step) => [Number(step.day_start), step.minutes]));
    const stepMinutes = stepsOfDay.get(Number(row.day_start));
    return distanceAsRead(unpackMinutes(row.minutes), stepMinutes ? unpackMinutes(stepMinutes) : null, stride);
  });
}

const storedMinutes = (row: DayRow): DayMinutes => unpackMinutes(row.minutes);

/**
 * Sums per bucket index of `boundaries` (missing index: nothing) from the days holding them;
 * `minutesOf` gives a day's minute values when an hour is cut (by default its stored minutes).
 */
export function sumsFromDays(boundaries: readonly number[], rows: readonly DayRow[], minutesOf = storedMinutes): number[] {
  const sums: number[] = [];
  const add = (index: number, value: number) => {
    if (value !== 0) sums[index] = (sums[index] ?? 0) + value;
  };
  walkDays(boundaries, rows, {
    day: (index, row) => add(index, Number(row.total)),
    hoursOf: (row) => unpackHours(row.hours),
    minutesOf,
    hour: (index, hours, hour) => add(index, hours[hour]!),
    minute(index, minutes, m) {
      if (minutes[m] !== ABSENT) add(index, minutes[m]!);
    },
  });
  return sums;
}
