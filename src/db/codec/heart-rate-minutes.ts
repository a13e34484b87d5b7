/**
 * The encoding of one person's heart rate for one UTC day in `series_days`, metric 'heartrate'
 * (docs/decisions/0015-heart-rate-series.md). Each minute is absent or holds the avg, min and max
 * of the readings sent for it, whole beats per minute (25..250).
 *
 * `minutes`: varints — the number of runs, the runs of present minutes (runs.ts) — followed by
 * three columns over the present minutes in order: the avg as a zigzag delta from the previous
 * present minute's avg (from 0 for the first), avg − min, and max − avg. Columns rather than
 * triples let deflate see runs of equal small numbers (a minute of one reading has zero offsets).
 * Behind the format byte, deflated with Z_FILTERED when that is shorter (frame.ts): 3–5% smaller
 * on these small numbers than the default strategy (docs/performance.md, 2026-11-26).
 *
 * The quarter-hour summary and the day's total beside them: heart-rate-summary.ts.
 */
import type { Codec } from './codec.js';
import { MINUTES_PER_DAY } from './day.js';
import { FILTERED, frame, unframe } from './frame.js';
import { forEachRun, runEnd } from './runs.js';
import { unzigzag, VarintReader, VarintWriter, zigzag } from './varint.js';

export const MIN_BPM = 25;
export const MAX_BPM = 250;

/** A day unpacked: minute m holds data when avg[m] !== 0 (a heart rate is never 0). */
export interface HeartRateMinutes {
  avg: Uint8Array;
  min: Uint8Array;
  max: Uint8Array;
}

/** One minute with data of a packed day. */
export interface HeartRateMinute {
  minute: number;
  avg: number;
  min: number;
  max: number;
}

const WHAT = 'a packed heart-rate day';

export function emptyHeartRateDay(): HeartRateMinutes {
  return { avg: new Uint8Array(MINUTES_PER_DAY), min: new Uint8Array(MINUTES_PER_DAY), max: new Uint8Array(MINUTES_PER_DAY) };
}

export function minutesWithData(day: HeartRateMinutes): number {
  let count = 0;
  for (let m = 0; m < MINUTES_PER_DAY; m++) if (day.avg[m] !== 0) count++;
  return count;
}

/** The varints of a day's minutes (the body behind the format byte); empty for a day without data. */
export function minuteVarints(day: HeartRateMinutes): Uint8Array {
  const runs: number[] = [];
  forEachRun(
    (m) => day.avg[m] !== 0,
    (skipped, present) => runs.push(skipped, present),
  );
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
  return frame(minuteVarints(day), FILTERED);
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
  const body = unframe(bytes, WHAT);
  if (body.length === 0) return null;
  const input = new VarintReader(body, WHAT);
  const runCount = input.varint();
  // The runs first, as [start, end) pairs: the avg column comes after all of them.
  const runs = new Uint16Array(runCount * 2);
  let m = 0;
  for (let r = 0; r < runCount; r++) {
    const skipped = input.varint();
    const end = runEnd(m, skipped, input.varint(), WHAT);
    runs[r * 2] = m + skipped;
    runs[r * 2 + 1] = m = end;
  }
  let value = 0;
  for (let r = 0; r < runCount; r++) {
    for (let minute = runs[r * 2]!; minute < runs[r * 2 + 1]!; minute++) {
      value += unzigzag(input.varint());
      if (value < MIN_BPM || value > MAX_BPM) throw new Error(`${WHAT} holds an avg out of range`);
      avg[minute] = value;
    }
  }
  return input;
}

function* iterateMinutes(bytes: Uint8Array): IterableIterator<HeartRateMinute> {
  // The columns are not interleaved: the day is decoded, then walked.
  const day = unpackHeartRateMinutes(bytes);
  for (let minute = 0; minute < MINUTES_PER_DAY; minute++) {
    if (day.avg[minute] !== 0) yield { minute, avg: day.avg[minute]!, min: day.min[minute]!, max: day.max[minute]! };
  }
}

export const heartRateMinutes: Codec<HeartRateMinutes, HeartRateMinute> = {
  name: 'heart-rate minutes',
  encode: packHeartRateMinutes,
  decode: unpackHeartRateMinutes,
  iterate: iterateMinutes,
};
