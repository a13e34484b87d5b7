/**
 * The day rows of the series store (`series_days`: one row per person, metric and UTC day) as every
 * series read gets them, whatever the metric: one reader per dialect (sqlite/series-days.ts,
 * postgres/series-days.ts), walked into buckets by series-walk.ts.
 */
import { SERIES_METRIC_NAMES, SERIES_METRICS, type SeriesMetric } from '../db/series-metrics.js';
import { DAY_SECONDS, dayStartOf } from '../db/codec/day.js';

/**
 * Metrics whose `total` may pass 2^53, read exactly: heart rate's codec packs the day's aggregates in
 * 58 bits (db/codec/heart-rate-summary.ts). A sum metric's total is a plain sum.
 */
export const EXACT_TOTAL: Readonly<Record<SeriesMetric, boolean>> = Object.fromEntries(
  SERIES_METRIC_NAMES.map((metric) => [metric, SERIES_METRICS[metric].codec === 'heart-rate-minutes']),
) as Record<SeriesMetric, boolean>;

/**
 * A stored day as its readers get it. Integers may come as text (PostgreSQL) or, for a metric with
 * an EXACT_TOTAL, as BigInt (SQLite): readers of a total take Number() or BigInt() of it. A packed
 * column the read did not ask for (DayDetail) is NOT_READ.
 */
export interface DayRow {
  day_start: number | bigint | string;
  total: number | bigint | string;
  hours: Uint8Array;
  minutes: Uint8Array;
}

/**
 * What of each day a series needs: only totals when no boundary cuts a UTC day (daily series in
 * UTC), the hourly sums too when none cuts an hour (Europe/Berlin, hourly series), else the minutes.
 * What is not needed is not read: each packed column costs a buffer per row — on SQLite reading the
 * hours of 30 days took 85 µs against 28 µs for the totals alone — and, for the minutes on
 * PostgreSQL, detoasting.
 */
export type DayDetail = 'totals' | 'hours' | 'minutes';

/** A packed column a read did not ask for: one shared empty array, never written to. */
export const NOT_READ = new Uint8Array(0);

/** The user's days of `metric` with day_start in [from, to), by day_start, with `detail`. */
export type DayReader = (userId: string, metric: SeriesMetric, from: number, to: number, detail: DayDetail) => DayRow[] | Promise<DayRow[]>;

export function dayDetailFor(boundaries: readonly number[]): DayDetail {
  if (boundaries.every((boundary) => boundary % DAY_SECONDS === 0)) return 'totals';
  return boundaries.every((boundary) => boundary % 3600 === 0) ? 'hours' : 'minutes';
}

/** The user's days of `metric` under the buckets of `boundaries` (none for an empty plan), read with `detail`. */
export async function daysUnder(readDays: DayReader, userId: string, metric: SeriesMetric, boundaries: readonly number[], detail = dayDetailFor(boundaries)): Promise<DayRow[]> {
  if (boundaries.length < 2) return [];
  return readDays(userId, metric, dayStartOf(boundaries[0]!), boundaries[boundaries.length - 1]!, detail);
}
