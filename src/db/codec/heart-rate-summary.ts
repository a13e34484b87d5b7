/**
 * The columns beside a heart-rate day's minutes (heart-rate-minutes.ts) in `series_days`:
 *
 * `hours`: what day and hour buckets need without the minutes (never deflated: it is read for
 * every day of a series in a zone that is not UTC) — per quarter hour (96) the minutes with data
 * and the sum of their avgs (for averages, and for the resting heart rate's half hours), per hour
 * with data its min and max.
 *
 * `total`: the UTC day's aggregates in one integer (packTotal), so that a daily series in UTC reads
 * no packed column at all. The resting heart rate in it is the domain's rule
 * (domain/resting-heart-rate.ts), given to packHeartRateDay: the encoding only keeps the figure.
 */
import { MINUTES_PER_DAY } from './day.js';
import { MIN_BPM, packHeartRateMinutes, type HeartRateMinutes } from './heart-rate-minutes.js';
import { unzigzag, VarintReader, VarintWriter, zigzag } from './varint.js';

export const QUARTERS_PER_DAY = 96;

const WHAT = 'a packed heart-rate day';

/** Per quarter hour: minutes with data and the sum of their avgs; per hour: min and max (0 without data). */
export interface HeartRateSummary {
  quarterCounts: Uint8Array;
  quarterSums: Uint16Array;
  hourMin: Uint8Array;
  hourMax: Uint8Array;
}

/** The resting heart rate of quarter hours given as [count, sum] each, in beats per minute; null when there is none. */
export type RestingRule = (counts: ArrayLike<number>, sums: ArrayLike<number>) => number | null;

function emptySummary(): HeartRateSummary {
  return {
    quarterCounts: new Uint8Array(QUARTERS_PER_DAY),
    quarterSums: new Uint16Array(QUARTERS_PER_DAY),
    hourMin: new Uint8Array(24),
    hourMax: new Uint8Array(24),
  };
}

export function summarize(day: HeartRateMinutes): HeartRateSummary {
  const summary = emptySummary();
  for (let m = 0; m < MINUTES_PER_DAY; m++) {
    const avg = day.avg[m]!;
    if (avg === 0) continue;
    const q = (m / 15) | 0;
    const h = (m / 60) | 0;
    summary.quarterCounts[q]!++;
    summary.quarterSums[q]! += avg;
    const low = day.min[m]!;
    const high = day.max[m]!;
    if (summary.hourMin[h] === 0 || low < summary.hourMin[h]!) summary.hourMin[h] = low;
    if (high > summary.hourMax[h]!) summary.hourMax[h] = high;
  }
  return summary;
}

/**
 * Quarters: the count, and when not 0 the sum as a zigzag delta from count × the previous quarter's
 * rounded mean (a steady heart rate costs a byte). Hours with data: min − 25 and max − min.
 */
export function packSummary(summary: HeartRateSummary): Buffer {
  const out = new VarintWriter(1024);
  let mean = 70;
  for (let q = 0; q < QUARTERS_PER_DAY; q++) {
    const count = summary.quarterCounts[q]!;
    out.varint(count);
    if (count === 0) continue;
    const sum = summary.quarterSums[q]!;
    out.varint(zigzag(sum - count * mean));
    mean = Math.round(sum / count);
  }
  for (let h = 0; h < 24; h++) {
    if (summary.hourMin[h] === 0) continue;
    out.varint(summary.hourMin[h]! - MIN_BPM);
    out.varint(summary.hourMax[h]! - summary.hourMin[h]!);
  }
  return out.done();
}

export function unpackSummary(bytes: Uint8Array): HeartRateSummary {
  const summary = emptySummary();
  const input = new VarintReader(bytes, WHAT);
  let mean = 70;
  for (let q = 0; q < QUARTERS_PER_DAY; q++) {
    const count = input.varint();
    if (count > 15) throw new Error(`${WHAT} has a quarter hour of more than 15 minutes`);
    summary.quarterCounts[q] = count;
    if (count === 0) continue;
    const sum = count * mean + unzigzag(input.varint());
    summary.quarterSums[q] = sum;
    mean = Math.round(sum / count);
  }
  for (let h = 0; h < 24; h++) {
    let present = false;
    for (let q = h * 4; q < h * 4 + 4; q++) present ||= summary.quarterCounts[q] !== 0;
    if (!present) continue;
    summary.hourMin[h] = MIN_BPM + input.varint();
    summary.hourMax[h] = summary.hourMin[h]! + input.varint();
  }
  return summary;
}

/** The day's aggregates as they are kept in `total`. */
export interface HeartRateTotal {
  minutes: number;
  sum: number;
  min: number;
  max: number;
  /** The UTC day's resting heart rate in tenths of a beat, 0 when there is none. */
  restingTenths: number;
}

const TOTAL_FIELDS = [
  ['minutes', 11n],
  ['sum', 19n],
  ['min', 8n],
  ['max', 8n],
  ['restingTenths', 12n],
] as const;

/**
 * Packs the aggregates into one integer of 58 bits, lowest field first: minutes (≤ 1440), sum
 * (≤ 360,000), min, max, resting tenths (≤ 2,500). Beyond 2^53, so it is built and read as a
 * BigInt: both databases keep it as a 64-bit integer.
 */
export function packTotal(total: HeartRateTotal): bigint {
  let packed = 0n;
  let shift = 0n;
  for (const [name, bits] of TOTAL_FIELDS) {
    packed |= BigInt(total[name]) << shift;
    shift += bits;
  }
  return packed;
}

/**
 * The fields of a packed total, read from its two halves as numbers — minutes and sum in the low
 * 30 bits, min, max and resting tenths above (TOTAL_FIELDS) — so that a day costs two BigInt
 * operations: field by field in BigInt, 30 days took 15 µs (docs/performance.md).
 */
export function unpackTotal(value: bigint | number | string): HeartRateTotal {
  const packed = BigInt(value);
  const low = Number(packed & 0x3fff_ffffn);
  const high = Number(packed >> 30n);
  return { minutes: low & 0x7ff, sum: low >>> 11, min: high & 0xff, max: (high >>> 8) & 0xff, restingTenths: high >>> 16 };
}

/** The day's aggregates from its summary, with the resting heart rate that `resting` finds in its quarter hours. */
export function totalOf(summary: HeartRateSummary, resting: RestingRule): HeartRateTotal {
  let minutes = 0;
  let sum = 0;
  for (let q = 0; q < QUARTERS_PER_DAY; q++) {
    minutes += summary.quarterCounts[q]!;
    sum += summary.quarterSums[q]!;
  }
  let min = 0;
  let max = 0;
  for (let h = 0; h < 24; h++) {
    if (summary.hourMin[h] === 0) continue;
    if (min === 0 || summary.hourMin[h]! < min) min = summary.hourMin[h]!;
    if (summary.hourMax[h]! > max) max = summary.hourMax[h]!;
  }
  const bpm = resting(summary.quarterCounts, summary.quarterSums);
  return { minutes, sum, min, max, restingTenths: bpm === null ? 0 : Math.round(bpm * 10) };
}

/** A day's row values (beside user, metric and day start). */
export interface PackedHeartRateDay {
  total: bigint;
  hours: Buffer;
  minutes: Buffer;
}

export function packHeartRateDay(day: HeartRateMinutes, resting: RestingRule): PackedHeartRateDay {
  const summary = summarize(day);
  return { total: packTotal(totalOf(summary, resting)), hours: packSummary(summary), minutes: packHeartRateMinutes(day) };
}
