/**
 * The encoding of a day of minute values in `series_days` (docs/decisions/0013-series-store.md,
 * 0014-minute-metrics.md): the day's 1440 minutes, each absent or holding a non-negative integer,
 * and beside them the day's total and its 24 hourly sums, so that reads whose buckets do not cut
 * through an hour never unpack the minutes.
 *
 * `minutes`: the runs of present minutes (runs.ts), each followed by the values of its minutes, as
 * varints; behind the format byte, deflated with the default strategy when that is shorter
 * (frame.ts). A day with no minute is the empty string. A day of minute steps of 16 waking hours
 * is about 350 bytes deflated against 980 as runs, a day of calories about 460 against 960
 * (docs/performance.md, November 26).
 * `hours`: the 24 hourly sums as varints (empty hours are a zero byte).
 */
import type { Codec } from './codec.js';
import { MINUTES_PER_DAY } from './day.js';
import { DEFAULT_STRATEGY, frame, unframe } from './frame.js';
import { forEachRun, runEnd } from './runs.js';
import { VarintReader, VarintWriter } from './varint.js';

/** Absent minutes in an unpacked day. */
export const ABSENT = -1;

/** A day unpacked: `values[m]` is minute m's value, or ABSENT. */
export type DayMinutes = Int32Array;

/** One present minute of a packed day. */
export interface MinuteValue {
  minute: number;
  value: number;
}

const WHAT = 'a packed series day';

export function emptyDay(): DayMinutes {
  return new Int32Array(MINUTES_PER_DAY).fill(ABSENT);
}

/** The runs alone, with no format byte: the form migration 007 wrote (009 converts it). */
export function packRuns(day: DayMinutes): Buffer {
  const out = new VarintWriter();
  forEachRun(
    (m) => day[m] !== ABSENT,
    (skipped, present, start) => {
      out.varint(skipped);
      out.varint(present);
      for (let i = start; i < start + present; i++) out.varint(day[i]!);
    },
  );
  return out.done();
}

function* iterateRuns(runs: Uint8Array): IterableIterator<MinuteValue> {
  const input = new VarintReader(runs, WHAT);
  let minute = 0;
  while (input.more) {
    const skipped = input.varint();
    const present = input.varint();
    const end = runEnd(minute, skipped, present, WHAT);
    for (minute += skipped; minute < end; minute++) yield { minute, value: input.varint() };
  }
}

export function unpackRuns(runs: Uint8Array): DayMinutes {
  const day = emptyDay();
  const input = new VarintReader(runs, WHAT);
  let m = 0;
  while (input.more) {
    const skipped = input.varint();
    const present = input.varint();
    const end = runEnd(m, skipped, present, WHAT);
    for (m += skipped; m < end; m++) day[m] = input.varint();
  }
  return day;
}

export function packMinutes(day: DayMinutes): Buffer {
  return frame(packRuns(day), DEFAULT_STRATEGY);
}

export function unpackMinutes(bytes: Uint8Array): DayMinutes {
  return unpackRuns(unframe(bytes, WHAT));
}

export const minuteValues: Codec<DayMinutes, MinuteValue> = {
  name: 'minute values',
  encode: packMinutes,
  decode: unpackMinutes,
  iterate: (bytes) => iterateRuns(unframe(bytes, WHAT)),
};

/** True when the day has no minute with a value. */
export function isEmptyDay(day: DayMinutes): boolean {
  for (let m = 0; m < MINUTES_PER_DAY; m++) if (day[m] !== ABSENT) return false;
  return true;
}

/** True when two days hold the same minutes. */
export function sameMinutes(a: DayMinutes, b: DayMinutes): boolean {
  for (let m = 0; m < MINUTES_PER_DAY; m++) if (a[m] !== b[m]) return false;
  return true;
}

/** The day's 24 hourly sums (absent minutes add nothing). */
export function hourSums(day: DayMinutes): number[] {
  const hours = new Array<number>(24).fill(0);
  for (let m = 0; m < MINUTES_PER_DAY; m++) {
    const value = day[m]!;
    if (value !== ABSENT) hours[(m / 60) | 0]! += value;
  }
  return hours;
}

export function packHours(hours: readonly number[]): Buffer {
  const out = new VarintWriter();
  for (const sum of hours) out.varint(sum);
  return out.done();
}

export function unpackHours(bytes: Uint8Array): number[] {
  const input = new VarintReader(bytes, WHAT);
  return Array.from({ length: 24 }, () => input.varint());
}

/** A day's row values (beside user, metric and day start). */
export interface PackedDay {
  total: number;
  hours: Buffer;
  minutes: Buffer;
}

/** The row of a day whose sums are the sums of its own minutes. */
export function packDay(day: DayMinutes): PackedDay {
  return packDayWithSums(day, hourSums(day));
}

/** The row of a day whose sums are given: distance, whose sums also count minutes derived from steps. */
export function packDayWithSums(day: DayMinutes, hours: readonly number[]): PackedDay {
  return { total: hours.reduce((a, b) => a + b, 0), hours: packHours(hours), minutes: packMinutes(day) };
}
