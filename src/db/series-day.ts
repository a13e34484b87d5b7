/**
 * The packed form of one person × metric × UTC day in `series_days` (docs/decisions/0013-series-store.md,
 * 0014-minute-metrics.md): the day's 1440 minutes, each absent or holding a non-negative integer,
 * and beside them the day's total and its 24 hourly sums, so that reads whose buckets do not cut
 * through an hour never unpack the minutes.
 *
 * The minutes as runs: alternating unsigned LEB128 varints — empty minutes skipped, minutes
 * present, then the values of those present minutes — until the day is covered. The `minutes`
 * column holds those runs behind one format byte: RAW (as they are) or DEFLATED (node:zlib
 * deflateRaw of them), whichever is shorter; a day with no minute is the empty string. A day of
 * minute steps of 16 waking hours is about 350 bytes deflated against 980 as runs, a day of
 * calories about 460 against 960 (docs/performance.md, November 26).
 * `hours`: the 24 hourly sums as varints (empty hours are a zero byte).
 */
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { VarintReader, VarintWriter } from './varint.js';

export const MINUTES_PER_DAY = 1440;
export const DAY_SECONDS = 86_400;

/** Absent minutes in an unpacked day. */
export const ABSENT = -1;

/** A day unpacked: `values[m]` is minute m's value, or ABSENT. */
export type DayMinutes = Int32Array;

/** The format byte in front of the runs of a day's minutes. */
export const RAW = 0;
export const DEFLATED = 1;
/** Runs shorter than this are kept raw: deflate would not make them shorter. */
const DEFLATE_FROM_BYTES = 48;

export function emptyDay(): DayMinutes {
  return new Int32Array(MINUTES_PER_DAY).fill(ABSENT);
}

/** The UTC day holding instant `t` (seconds). */
export function dayStartOf(t: number): number {
  return t - (((t % DAY_SECONDS) + DAY_SECONDS) % DAY_SECONDS);
}

function writeRuns(day: DayMinutes, out: VarintWriter): void {
  let m = 0;
  while (m < MINUTES_PER_DAY) {
    const runStart = m;
    while (m < MINUTES_PER_DAY && day[m] === ABSENT) m++;
    if (m === MINUTES_PER_DAY) break;
    const present = m;
    while (m < MINUTES_PER_DAY && day[m] !== ABSENT) m++;
    out.varint(present - runStart);
    out.varint(m - present);
    for (let i = present; i < m; i++) out.varint(day[i]!);
  }
}

function readRuns(bytes: Uint8Array, from: number): DayMinutes {
  const day = emptyDay();
  const input = new VarintReader(bytes, from);
  let m = 0;
  while (input.more) {
    m += input.varint();
    const count = input.varint();
    if (m + count > MINUTES_PER_DAY) throw new Error('a packed series day holds more than 1440 minutes');
    for (let i = 0; i < count; i++) day[m++] = input.varint();
  }
  return day;
}

/** The runs alone, with no format byte: the form migration 007 wrote (009 converts it). */
export function packRuns(day: DayMinutes): Buffer {
  const out = new VarintWriter();
  writeRuns(day, out);
  return out.done();
}

export function unpackRuns(bytes: Uint8Array): DayMinutes {
  return readRuns(bytes, 0);
}

export function packMinutes(day: DayMinutes): Buffer {
  const out = new VarintWriter(256, RAW);
  writeRuns(day, out);
  if (out.size === 1) return Buffer.alloc(0);
  const raw = out.done();
  if (raw.length < DEFLATE_FROM_BYTES) return raw;
  const deflated = deflateRawSync(raw.subarray(1));
  if (deflated.length + 1 >= raw.length) return raw;
  const packed = Buffer.allocUnsafe(deflated.length + 1);
  packed[0] = DEFLATED;
  deflated.copy(packed, 1);
  return packed;
}

export function unpackMinutes(bytes: Uint8Array): DayMinutes {
  if (bytes.length === 0) return emptyDay();
  switch (bytes[0]) {
    case RAW:
      return readRuns(bytes, 1);
    case DEFLATED:
      return readRuns(inflateRawSync(bytes.subarray(1)), 0);
    default:
      throw new Error(`a packed series day has the unknown format ${bytes[0]}`);
  }
}

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
  const input = new VarintReader(bytes);
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
