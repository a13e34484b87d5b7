/**
 * The packed form of one person's heart rate for one UTC day in `series_days`, metric 'heartrate'
 * (docs/decisions/0015-heart-rate-series.md). Each minute is absent or holds the avg, min and max
 * of the readings sent for it, whole beats per minute (25..250).
 *
 * `minutes`: a format byte (RAW or DEFLATED), then unsigned LEB128 varints — the number of runs,
 * each run as (absent minutes skipped, minutes present) — followed by three columns over the
 * present minutes in order: the avg as a zigzag delta from the previous present minute's avg (from
 * 0 for the first), avg − min, and max − avg. Columns rather than triples let deflate see runs of
 * equal small numbers (a minute of one reading has zero offsets). DEFLATED is node:zlib's
 * deflateRaw of those varints, used when it is smaller (docs/performance.md, 2026-11-26).
 *
 * `hours`: what day and hour buckets need without the minutes (never deflated: it is read for
 * every day of a series in a zone that is not UTC) — per quarter hour (96) the minutes with data
 * and the sum of their avgs (for averages, and for the resting heart rate's half hours), per hour
 * with data its min and max.
 *
 * `total`: the UTC day's aggregates in one integer (packTotal), so that a daily series in UTC reads
 * no packed column at all.
 */
import { constants, deflateRawSync, inflateRawSync } from 'node:zlib';
import { MINUTES_PER_DAY } from './series-day.js';
import { VarintReader, VarintWriter } from './varint.js';

export const MIN_BPM = 25;
export const MAX_BPM = 250;
export const QUARTERS_PER_DAY = 96;

/** A day unpacked: minute m holds data when avg[m] !== 0 (a heart rate is never 0). */
export interface HeartRateMinutes {
  avg: Uint8Array;
  min: Uint8Array;
  max: Uint8Array;
}

export function emptyHeartRateDay(): HeartRateMinutes {
  return { avg: new Uint8Array(MINUTES_PER_DAY), min: new Uint8Array(MINUTES_PER_DAY), max: new Uint8Array(MINUTES_PER_DAY) };
}

export function minutesWithData(day: HeartRateMinutes): number {
  let count = 0;
  for (let m = 0; m < MINUTES_PER_DAY; m++) if (day.avg[m] !== 0) count++;
  return count;
}

const RAW = 0;
const DEFLATED = 1;

const zigzag = (n: number) => (n >= 0 ? n * 2 : -n * 2 - 1);
const unzigzag = (n: number) => (n & 1 ? -(n + 1) / 2 : n / 2);

/** The varints of a day's minutes (the RAW format without its format byte); empty for a day without data. */
export function minuteVarints(day: HeartRateMinutes): Uint8Array {
  const runs: number[] = [];
  let m = 0;
  while (m < MINUTES_PER_DAY) {
    const runStart = m;
    while (m < MINUTES_PER_DAY && day.avg[m] === 0) m++;
    if (m === MINUTES_PER_DAY) break;
    const present = m;
    while (m < MINUTES_PER_DAY && day.avg[m] !== 0) m++;
    runs.push(present - runStart, m - present);
  }
  if (runs.length === 0) return new Uint8Array(0);
  const out = new VarintWriter(1024);
  out.varint(runs.length / 2);
  for (const n of runs) out.varint(n);
  let previous = 0;
  for (let i = 0; i < MINUTES_PER_DAY; i++) {
    const avg = day.avg[i]!;
    if (avg === 0) continue;
    out.varint(zigzag(avg - previous));
    previous = avg;
  }
  for (let i = 0; i < MINUTES_PER_DAY; i++) if (day.avg[i] !== 0) out.varint(day.avg[i]! - day.min[i]!);
  for (let i = 0; i < MINUTES_PER_DAY; i++) if (day.avg[i] !== 0) out.varint(day.max[i]! - day.avg[i]!);
  return out.view();
}

export function packHeartRateMinutes(day: HeartRateMinutes): Buffer {
  const raw = minuteVarints(day);
  if (raw.length === 0) return Buffer.alloc(0);
  // Z_FILTERED (fewer, shorter string matches, more Huffman coding) is 3–5% smaller on these
  // small numbers than the default strategy (docs/performance.md, 2026-11-26).
  const deflated = deflateRawSync(raw, { strategy: constants.Z_FILTERED });
  const format = deflated.length < raw.length ? DEFLATED : RAW;
  const body = format === DEFLATED ? deflated : raw;
  const packed = Buffer.allocUnsafe(body.length + 1);
  packed[0] = format;
  packed.set(body, 1);
  return packed;
}

export function unpackHeartRateMinutes(bytes: Uint8Array): HeartRateMinutes {
  const day = emptyHeartRateDay();
  const input = readAverages(bytes, day.avg);
  if (input === null) return day;
  // The other columns follow the present minutes in order: those whose avg is not 0.
  for (let m = 0; m < MINUTES_PER_DAY; m++) if (day.avg[m] !== 0) day.min[m] = day.avg[m]! - input.varint();
  for (let m = 0; m < MINUTES_PER_DAY; m++) if (day.avg[m] !== 0) day.max[m] = day.avg[m]! + input.varint();
  return day;
}

/**
 * Only the avg of each minute (0: no data) of a packed day: what rules that look at each minute's
 * average read, without decoding the min and max columns.
 */
export function unpackHeartRateAverages(bytes: Uint8Array): Uint8Array {
  const avg = new Uint8Array(MINUTES_PER_DAY);
  readAverages(bytes, avg);
  return avg;
}

/**
 * Decodes the runs and the avg column of a packed day into `avg`; returns the reader at the next
 * column (avg − min), or null for a day without data.
 */
function readAverages(bytes: Uint8Array, avg: Uint8Array): VarintReader | null {
  if (bytes.length === 0) return null;
  const body = bytes.subarray(1);
  let varints: Uint8Array;
  if (bytes[0] === RAW) varints = body;
  else if (bytes[0] === DEFLATED) varints = inflateRawSync(body);
  else throw new Error(`a packed heart-rate day has an unknown format ${bytes[0]}`);
  const input = new VarintReader(varints, 0, 'a packed heart-rate day');
  const runCount = input.varint();
  // The runs first, as [start, end) pairs: the avg column comes after all of them.
  const runs = new Uint16Array(runCount * 2);
  let m = 0;
  for (let r = 0; r < runCount; r++) {
    m += input.varint();
    const count = input.varint();
    if (m + count > MINUTES_PER_DAY) throw new Error('a packed heart-rate day holds more than 1440 minutes');
    runs[r * 2] = m;
    runs[r * 2 + 1] = m += count;
  }
  let value = 0;
  for (let r = 0; r < runCount; r++) {
    for (let minute = runs[r * 2]!; minute < runs[r * 2 + 1]!; minute++) {
      value += unzigzag(input.varint());
      if (value < MIN_BPM || value > MAX_BPM) throw new Error('a packed heart-rate day holds an avg out of range');
      avg[minute] = value;
    }
  }
  return input;
}

/** Per quarter hour: minutes with data and the sum of their avgs; per hour: min and max (0 without data). */
export interface HeartRateSummary {
  quarterCounts: Uint8Array;
  quarterSums: Uint16Array;
  hourMin: Uint8Array;
  hourMax: Uint8Array;
}

export function summarize(day: HeartRateMinutes): HeartRateSummary {
  const summary: HeartRateSummary = {
    quarterCounts: new Uint8Array(QUARTERS_PER_DAY),
    quarterSums: new Uint16Array(QUARTERS_PER_DAY),
    hourMin: new Uint8Array(24),
    hourMax: new Uint8Array(24),
  };
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
  return Buffer.from(out.view());
}

export function unpackSummary(bytes: Uint8Array): HeartRateSummary {
  const summary: HeartRateSummary = {
    quarterCounts: new Uint8Array(QUARTERS_PER_DAY),
    quarterSums: new Uint16Array(QUARTERS_PER_DAY),
    hourMin: new Uint8Array(24),
    hourMax: new Uint8Array(24),
  };
  const input = new VarintReader(bytes, 0, 'a packed heart-rate day');
  let mean = 70;
  for (let q = 0; q < QUARTERS_PER_DAY; q++) {
    const count = input.varint();
    if (count > 15) throw new Error('a packed heart-rate day has a quarter hour of more than 15 minutes');
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

/**
 * The resting heart rate (docs/api.md, "Resting heart rate"): the lowest mean of the minute avgs in
 * a half hour made of two consecutive quarter hours, counting a half hour only when at least
 * RESTING_MIN_MINUTES of its 30 minutes hold data. `quarters` lists [count, sum] per quarter hour in
 * time order (the quarters of a local day, over one UTC midnight or more); null when no half hour
 * counts.
 */
export const RESTING_MIN_MINUTES = 20;

export function lowestHalfHour(counts: ArrayLike<number>, sums: ArrayLike<number>, from = 0, to = counts.length): number | null {
  let best: number | null = null;
  for (let q = from; q + 1 < to; q++) {
    const count = counts[q]! + counts[q + 1]!;
    if (count < RESTING_MIN_MINUTES) continue;
    const mean = (sums[q]! + sums[q + 1]!) / count;
    if (best === null || mean < best) best = mean;
  }
  return best;
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

export function totalOf(summary: HeartRateSummary): HeartRateTotal {
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
  const resting = lowestHalfHour(summary.quarterCounts, summary.quarterSums);
  return { minutes, sum, min, max, restingTenths: resting === null ? 0 : Math.round(resting * 10) };
}

/** A day's row values (beside user, metric and day start). */
export interface PackedHeartRateDay {
  total: bigint;
  hours: Buffer;
  minutes: Buffer;
}

export function packHeartRateDay(day: HeartRateMinutes): PackedHeartRateDay {
  const summary = summarize(day);
  return { total: packTotal(totalOf(summary)), hours: packSummary(summary), minutes: packHeartRateMinutes(day) };
}
