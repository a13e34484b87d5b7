/**
 * Summing a stored minute metric into local-clock buckets from the day rows of the series store
 * (db/codec/minute-values.ts): one indexed range read of the user's days per series, whatever the
 * range, walked by series-walk.ts, which hands over the coarsest stored sums no boundary cuts — the
 * day's total, an hour's sum, or a minute. Sums are of the stored integers (tenths of a kcal for
 * calories).
 */
import type { BucketPlan } from '../calendar/step-buckets.js';
import { distanceAsRead, strideOf } from '../db/derived-distance.js';
import type { SumMetric } from '../db/schema.js';
import { ABSENT, unpackHours, unpackMinutes, type DayMinutes } from '../db/codec/minute-values.js';
import { DAY_SECONDS, dayStartOf } from '../db/codec/day.js';
import { walkDays } from './series-walk.js';

/** A stored day as its readers get it. PostgreSQL sends bigints as text. */
export interface DayRow {
  day_start: number | string;
  total: number | string;
  hours: Uint8Array;
  minutes: Uint8Array;
}

/**
 * What of each day a series needs: only totals when no boundary cuts a UTC day (daily series in
 * UTC), the hourly sums too when none cuts an hour (Europe/Berlin, hourly series), else the minutes.
 * What is not needed is not read (an empty array): each packed column costs a buffer per row —
 * on SQLite reading the hours of 30 days took 85 µs against 28 µs for the totals alone — and,
 * for the minutes on PostgreSQL, detoasting.
 */
export type DayDetail = 'totals' | 'hours' | 'minutes';

/** A packed column a read did not ask for: one shared empty array, never written to. */
export const NOT_READ = new Uint8Array(0);

/**
 * Rows read with `detail` get the packed columns they were not read with as one shared empty array
 * (never written to): every day row has one shape whatever was read. The readers ask the database
 * for no value there at all: on PostgreSQL an empty bytea would be a Buffer per column and row.
 */
export function fillUnreadColumns(rows: ReadonlyArray<{ hours: Uint8Array | null; minutes: Uint8Array | null }>, detail: DayDetail): void {
  if (detail === 'minutes') return;
  for (const row of rows) (row.hours ??= NOT_READ), (row.minutes = NOT_READ);
}

/** The user's days of `metric` with day_start in [from, to), by day_start, with `detail`. */
export type DayReader = (userId: string, metric: SumMetric, from: number, to: number, detail: DayDetail) => DayRow[] | Promise<DayRow[]>;

export function dayDetailFor(boundaries: readonly number[]): DayDetail {
  if (boundaries.every((boundary) => boundary % DAY_SECONDS === 0)) return 'totals';
  return boundaries.every((boundary) => boundary % 3600 === 0) ? 'hours' : 'minutes';
}

/**
 * Sums per bucket of a plan (a missing index: nothing in that bucket). `writtenAt`: where the
 * user's latest upload left the database, for a replica to have replayed before it answers
 * (store/replica.ts). `strideCm`: the profile's stride length, for the distance of minutes that
 * only have steps (db/derived-distance.ts); other metrics ignore it.
 */
export type SeriesSums = (userId: string, plan: BucketPlan, writtenAt?: string | null, strideCm?: number | null) => Promise<number[]>;

/** The sums of steps: SeriesSums under its first name. */
export type StepSums = SeriesSums;

/** Sums of a metric whose rows hold its own minutes: steps, calories. */
export function createSeriesSums(readDays: DayReader, metric: SumMetric): SeriesSums {
  return async (userId, plan) => {
    const { boundaries } = plan;
    if (boundaries.length < 2) return [];
    const rows = readDays(userId, metric, dayStartOf(boundaries[0]!), boundaries[boundaries.length - 1]!, dayDetailFor(boundaries));
    return sumsFromDays(boundaries, await rows);
  };
}

/** The sums of steps: createSeriesSums under its first name. */
export const createStepSums = (readDays: DayReader): SeriesSums => createSeriesSums(readDays, 'steps');

/**
 * Sums of distance. A distance row's total and hours already count the distance derived from
 * steps (db/derived-distance.ts), so only a series that cuts hours reads minutes: those of the
 * distance rows and of the steps rows of the same days, with the stride length of the profile.
 * A day with steps and no distance row has only steps that derive nothing (zeros).
 */
export function createDistanceSums(readDays: DayReader): SeriesSums {
  return async (userId, plan, _writtenAt, strideCm) => {
    const { boundaries } = plan;
    if (boundaries.length < 2) return [];
    const from = dayStartOf(boundaries[0]!);
    const to = boundaries[boundaries.length - 1]!;
    const detail = dayDetailFor(boundaries);
    const distance = readDays(userId, 'distance', from, to, detail);
    if (detail !== 'minutes') return sumsFromDays(boundaries, await distance);
    const steps = readDays(userId, 'steps', from, to, 'minutes');
    return distanceSumsFromDays(boundaries, await distance, await steps, strideCm);
  };
}

/**
 * Sums of distance per bucket from its day rows and, when an hour is cut (the rows read with their
 * minutes), the steps rows of the same days with the profile's stride length.
 */
export function distanceSumsFromDays(boundaries: readonly number[], distanceRows: readonly DayRow[], stepRows: readonly DayRow[], strideCm?: number | null): number[] {
  const stride = strideOf(strideCm);
  const stepsOfDay = new Map(stepRows.map((row) => [Number(row.day_start), row.minutes]));
  return sumsFromDays(boundaries, distanceRows, (row) => {
    const stepMinutes = stepsOfDay.get(Number(row.day_start));
    return distanceAsRead(unpackMinutes(row.minutes), stepMinutes ? unpackMinutes(stepMinutes) : null, stride);
  });
}

const storedMinutes = (row: DayRow): DayMinutes => unpackMinutes(row.minutes);

/**
 * Sums per bucket index of `boundaries` (missing index: nothing) from the days holding them;
 * `minutesOf` gives a day's minute values when an hour is cut (by default its stored minutes).
 */
export function sumsFromDays(boundaries: readonly number[], rows: readonly DayRow[], minutesOf: (row: DayRow) => DayMinutes = storedMinutes): number[] {
  const sums: number[] = [];
  const add = (index: number, value: number) => {
    if (value !== 0) sums[index] = (sums[index] ?? 0) + value;
  };
  let row: DayRow;
  let hours: number[];
  let minutes: DayMinutes | undefined;
  walkDays(boundaries, rows, {
    day: (index, whole) => add(index, Number(whole.total)),
    cut(cutRow) {
      row = cutRow;
      hours = unpackHours(cutRow.hours);
      minutes = undefined;
    },
    hour: (index, hour) => add(index, hours[hour]!),
    minute(index, m) {
      const value = (minutes ??= minutesOf(row))[m]!;
      if (value !== ABSENT) add(index, value);
    },
  });
  return sums;
}
