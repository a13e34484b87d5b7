/**
 * Heart-rate buckets of local-clock plans from the day rows of the series store
 * (db/codec/heart-rate-minutes.ts): one range read of the user's days per series, then per day the coarsest
 * stored figures that no bucket boundary cuts (series-walk.ts) — the day's aggregates in `total`,
 * else each hour's from the quarter-hour summary, else its minutes.
 *
 * Day buckets also carry the resting heart rate, the lowest half hour of the local day
 * (lowestHalfHour): from `total` when the bucket is a UTC day, else from the quarter hours lying
 * wholly inside the bucket, over the UTC days it spans.
 */
import type { BucketPlan } from '../calendar/step-buckets.js';
import { DAY_SECONDS, dayStartOf } from '../db/codec/day.js';
import { QUARTERS_PER_DAY, unpackSummary, unpackTotal, type HeartRateSummary } from '../db/codec/heart-rate-summary.js';
import { lowestHalfHour } from '../domain/resting-heart-rate.js';
import { unpackHeartRateMinutes, type HeartRateMinutes } from '../db/codec/heart-rate-minutes.js';
import { dayDetailFor, type DayDetail, type DayRow } from './series-days.js';
import { walkDays } from './series-walk.js';

/** A heart-rate day row: `total` exact (series-days.ts, EXACT_TOTAL). */
export type HeartRateDayRow = DayRow;

/** The user's heart-rate days with day_start in [from, to), by day_start, with `detail`: the DayReader of heart rate. */
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

/** The stored days a plan's buckets are made from, and the detail they were read with. */
export interface HeartRateDays {
  detail: DayDetail;
  rows: readonly HeartRateDayRow[];
}

/** The user's days that the buckets of `plan` need (read through `readDays`). */
export async function heartRateDaysOf(readDays: HeartRateDayReader, userId: string, plan: BucketPlan): Promise<HeartRateDays> {
  const { boundaries } = plan;
  const detail = dayDetailFor(boundaries);
  if (boundaries.length < 2) return { detail, rows: [] };
  return { detail, rows: await readDays(userId, dayStartOf(boundaries[0]!), boundaries[boundaries.length - 1]!, detail) };
}

/** The heart-rate buckets of `plan` from the user's days (read through `readDays`). */
export async function heartRateBuckets(readDays: HeartRateDayReader, userId: string, plan: BucketPlan): Promise<HeartRateBuckets> {
  const { detail, rows } = await heartRateDaysOf(readDays, userId, plan);
  return bucketsFromDays(plan, detail, rows);
}

export function bucketsFromDays(plan: BucketPlan, detail: DayDetail, rows: readonly HeartRateDayRow[]): HeartRateBuckets {
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
  // For resting heart rates of local days: the quarter hours of every day read, from the first.
  const firstDay = dayStartOf(boundaries[0]!);
  const wantQuarters = result.resting !== null && detail !== 'totals';
  const quarterDays = Math.ceil((boundaries[count]! - firstDay) / DAY_SECONDS);
  const quarterCounts = wantQuarters ? new Uint8Array(quarterDays * QUARTERS_PER_DAY) : null;
  const quarterSums = wantQuarters ? new Uint16Array(quarterDays * QUARTERS_PER_DAY) : null;
  /** The summary of a day read with its hours, its quarter hours kept for the resting heart rate. */
  const summaryOf = (row: HeartRateDayRow) => {
    const summary = unpackSummary(row.hours);
    if (quarterCounts && quarterSums) {
      const offset = ((Number(row.day_start) - firstDay) / DAY_SECONDS) * QUARTERS_PER_DAY;
      quarterCounts.set(summary.quarterCounts, offset);
      quarterSums.set(summary.quarterSums, offset);
    }
    return summary;
  };

  let row: HeartRateDayRow;
  let summary: HeartRateSummary;
  let minutes: HeartRateMinutes | undefined;
  walkDays(boundaries, rows, {
    day(index, whole) {
      const total = unpackTotal(whole.total);
      add(index, total.minutes, total.sum, total.min, total.max);
      if (wantQuarters) summaryOf(whole);
      else if (result.resting) result.resting[index] = total.restingTenths === 0 ? null : total.restingTenths / 10;
    },
    cut(cutRow) {
      row = cutRow;
      summary = summaryOf(cutRow);
      minutes = undefined;
    },
    hour(index, hour) {
      let hourMinutes = 0;
      let hourSum = 0;
      for (let q = hour * 4; q < hour * 4 + 4; q++) {
        hourMinutes += summary.quarterCounts[q]!;
        hourSum += summary.quarterSums[q]!;
      }
      add(index, hourMinutes, hourSum, summary.hourMin[hour]!, summary.hourMax[hour]!);
    },
    minute(index, m) {
      if (summary.hourMin[(m / 60) | 0] === 0) return;
      minutes ??= unpackHeartRateMinutes(row.minutes);
      const avg = minutes.avg[m]!;
      if (avg !== 0) add(index, 1, avg, minutes.min[m]!, minutes.max[m]!);
    },
  });

  if (result.resting && quarterCounts && quarterSums) {
    // The quarter hours wholly inside each day bucket.
    for (let i = 0; i < count; i++) {
      const from = Math.ceil((boundaries[i]! - firstDay) / 900);
      const to = Math.floor((boundaries[i + 1]! - firstDay) / 900);
      const resting = lowestHalfHour(quarterCounts, quarterSums, Math.max(0, from), Math.min(quarterCounts.length, to));
      result.resting[i] = resting === null ? null : Math.round(resting * 10) / 10;
    }
  }
  return result;
}
