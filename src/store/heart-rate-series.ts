/**
 * Heart-rate buckets of local-clock plans from the day rows of the series store
 * (db/codec/heart-rate-minutes.ts), walked by series-walk.ts: the day's aggregates in `total`,
 * each hour's from the quarter-hour summary in `hours`, else its minutes.
 *
 * Day buckets also carry the resting heart rate, the lowest half hour of the local day
 * (lowestHalfHour): from `total` when the plan's days are UTC days, else from the quarter hours
 * lying wholly inside each bucket, over the UTC days it spans.
 */
import type { BucketPlan } from '../calendar/step-buckets.js';
import { DAY_SECONDS, dayStartOf } from '../db/codec/day.js';
import { QUARTERS_PER_DAY, unpackSummary, unpackTotal } from '../db/codec/heart-rate-summary.js';
import { lowestHalfHour } from '../domain/resting-heart-rate.js';
import { unpackHeartRateMinutes } from '../db/codec/heart-rate-minutes.js';
import { dayDetailFor, type DayDetail, type DayRow } from './series-days.js';
import { walkDays } from './series-walk.js';

/** A heart-rate day row: `total` exact (series-days.ts, EXACT_TOTAL). */
export type HeartRateDayRow = DayRow;

/** The DayReader (series-days.ts) of heart rate: the user's heart-rate days with day_start in [from, to). */
export type HeartRateDayReader = (userId: string, from: number, to: number, detail: DayDetail) => DayRow[] | Promise<DayRow[]>;

/** What each bucket of a plan holds. */
export interface HeartRateBuckets {
  /** Minutes with data. */
  minutes: Uint16Array | Uint32Array;
  /** Sum of those minutes' avgs. */
  sums: Float64Array;
  /** Lowest min and highest max (0: none). */
  min: Uint8Array;
  max: Uint8Array;
  /** Day plans only: the resting heart rate per bucket (null: not enough data). */
  resting: Array<number | null> | null;
}

/** The user's days that the buckets of `plan` need, read with the detail they need. */
export async function heartRateDaysOf(readDays: HeartRateDayReader, userId: string, plan: BucketPlan): Promise<DayRow[]> {
  const { boundaries } = plan;
  if (boundaries.length < 2) return [];
  return readDays(userId, dayStartOf(boundaries[0]!), boundaries[boundaries.length - 1]!, dayDetailFor(boundaries));
}

/** The heart-rate buckets of `plan` from the user's days (read through `readDays`). */
export async function heartRateBuckets(readDays: HeartRateDayReader, userId: string, plan: BucketPlan): Promise<HeartRateBuckets> {
  return bucketsFromDays(plan, await heartRateDaysOf(readDays, userId, plan));
}

/** The buckets of `plan` from `rows`, read with at least the detail the plan needs (dayDetailFor). */
export function bucketsFromDays(plan: BucketPlan, rows: readonly DayRow[]): HeartRateBuckets {
  const { boundaries } = plan;
  const count = Math.max(0, boundaries.length - 1);
  const result: HeartRateBuckets = {
    minutes: new Uint32Array(count),
    sums: new Float64Array(count),
    min: new Uint8Array(count),
    max: new Uint8Array(count),
    resting: plan.granularity === 'day' ? new Array<number | null>(count).fill(null) : null,
  };
  if (count === 0) return result;
  const add = (index: number, minutes: number, sum: number, min: number, max: number) => {
    if (minutes === 0) return;
    result.minutes[index]! += minutes;
    result.sums[index]! += sum;
    if (result.min[index] === 0 || min < result.min[index]!) result.min[index] = min;
    if (max > result.max[index]!) result.max[index] = max;
  };
  // Local days that are not UTC days: their resting heart rates from the quarter hours of every day
  // read, from the first.
  const firstDay = dayStartOf(boundaries[0]!);
  const quarterCount = Math.ceil((boundaries[count]! - firstDay) / DAY_SECONDS) * QUARTERS_PER_DAY;
  const quarters = result.resting && dayDetailFor(boundaries) !== 'totals' ? { counts: new Uint8Array(quarterCount), sums: new Uint16Array(quarterCount) } : null;
  /** The summary of a day read with its hours, its quarter hours kept for the resting heart rate. */
  const summaryOf = (row: DayRow) => {
    const summary = unpackSummary(row.hours);
    if (quarters) {
      const offset = ((Number(row.day_start) - firstDay) / DAY_SECONDS) * QUARTERS_PER_DAY;
      quarters.counts.set(summary.quarterCounts, offset);
      quarters.sums.set(summary.quarterSums, offset);
    }
    return summary;
  };

  walkDays(boundaries, rows, {
    day(index, row) {
      const total = unpackTotal(row.total);
      add(index, total.minutes, total.sum, total.min, total.max);
      if (quarters) summaryOf(row);
      else if (result.resting) result.resting[index] = total.restingTenths === 0 ? null : total.restingTenths / 10;
    },
    hoursOf: summaryOf,
    minutesOf: (row) => unpackHeartRateMinutes(row.minutes),
    hour(index, summary, hour) {
      let hourMinutes = 0;
      let hourSum = 0;
      for (let q = hour * 4; q < hour * 4 + 4; q++) {
        hourMinutes += summary.quarterCounts[q]!;
        hourSum += summary.quarterSums[q]!;
      }
      add(index, hourMinutes, hourSum, summary.hourMin[hour]!, summary.hourMax[hour]!);
    },
    minute(index, minutes, m) {
      if (minutes.avg[m] !== 0) add(index, 1, minutes.avg[m]!, minutes.min[m]!, minutes.max[m]!);
    },
  });

  if (result.resting && quarters) {
    // The quarter hours wholly inside each day bucket.
    for (let i = 0; i < count; i++) {
      const from = Math.ceil((boundaries[i]! - firstDay) / 900);
      const to = Math.floor((boundaries[i + 1]! - firstDay) / 900);
      const resting = lowestHalfHour(quarters.counts, quarters.sums, Math.max(0, from), Math.min(quarters.counts.length, to));
      result.resting[i] = resting === null ? null : Math.round(resting * 10) / 10;
    }
  }
  return result;
}
