/**
 * Buckets of the local clock of a time zone, as UTC instants (docs/api.md, "Buckets and time
 * zones"): minutes, hours and days counted from local midnight, so a day is 23 or 25 hours long at
 * a DST change and starts at 18:30 UTC in Asia/Kolkata.
 *
 * A bucket boundary is an instant at which the local clock reads a whole minute, hour or day, or at
 * which an offset change makes the clock jump into another one. Hence:
 * - a local hour repeated when clocks go back (01:00–02:00 twice in New York in November) is two
 *   hour buckets of 60 minutes each, told apart by their UTC start_time;
 * - an hour skipped when clocks go forward does not exist: 01:00–03:00 is one 60-minute bucket;
 * - a day whose midnight is skipped starts when the clock jumps (e.g. at 01:00).
 *
 * Offsets come from the runtime's tz database (Intl, through luxon) and are kept per zone in
 * chunks of ~400 days (./zone-offsets.ts).
 */
import { IANAZone } from 'luxon';
import { isOn } from '../speed-switches.js';
import { keptChunks } from './zone-offsets.js';

export type Granularity = 'minute' | 'hour' | 'day';

export const GRANULARITY_SECONDS: Readonly<Record<Granularity, number>> = {
  minute: 60,
  hour: 3600,
  day: 86_400,
};

/** A stretch of time with one UTC offset: from `start` until the next span's start. */
export interface OffsetSpan {
  start: number;
  /** Seconds to add to UTC to get the local clock. */
  offset: number;
}

const CHUNK_SECONDS = 400 * 86_400;
/** Offsets are sampled daily; no zone changes its offset twice within one day. */
const SAMPLE_SECONDS = 86_400;

function offsetAt(zone: IANAZone, time: number): number {
  return Math.round(zone.offset(time * 1000) * 60);
}

/** The offset spans that start inside chunk `chunk` (the first one starts at the chunk start). */
export function chunkSpans(zoneName: string, chunk: number): readonly OffsetSpan[] {
  const zone = IANAZone.create(zoneName);
  const chunkStart = chunk * CHUNK_SECONDS;
  const chunkEnd = chunkStart + CHUNK_SECONDS;
  const spans: OffsetSpan[] = [{ start: chunkStart, offset: offsetAt(zone, chunkStart) }];
  let previousTime = chunkStart;
  let previousOffset = spans[0]!.offset;
  for (let time = chunkStart + SAMPLE_SECONDS; previousTime < chunkEnd; time = Math.min(time + SAMPLE_SECONDS, chunkEnd)) {
    const offset = offsetAt(zone, time);
    if (offset !== previousOffset) {
      // Binary search for the first second with the new offset.
      let low = previousTime;
      let high = time;
      while (high - low > 1) {
        const middle = Math.floor((low + high) / 2);
        if (offsetAt(zone, middle) === previousOffset) low = middle;
        else high = middle;
      }
      spans.push({ start: high, offset });
      previousOffset = offset;
    }
    previousTime = time;
  }
  return spans;
}

/** The spans of a chunk: kept, or worked out each time when STRIDE_PLAIN switches zone-offsets off. */
export const spansOfChunk = isOn('zone-offsets') ? keptChunks(chunkSpans) : chunkSpans;

/** The offset spans covering [from, to): the first starts at or before `from`. */
export function offsetSpans(zoneName: string, from: number, to: number): OffsetSpan[] {
  return spansWithin(spansOfChunk, zoneName, from, to);
}

/** offsetSpans on the plain path: every chunk worked out again (for the property test of ./zone-offsets.ts). */
export function plainOffsetSpans(zoneName: string, from: number, to: number): OffsetSpan[] {
  return spansWithin(chunkSpans, zoneName, from, to);
}

function spansWithin(spansOf: (zoneName: string, chunk: number) => readonly OffsetSpan[], zoneName: string, from: number, to: number): OffsetSpan[] {
  const spans: OffsetSpan[] = [];
  const firstChunk = Math.floor(from / CHUNK_SECONDS);
  const lastChunk = Math.floor((to - 1) / CHUNK_SECONDS);
  for (let chunk = firstChunk; chunk <= Math.max(firstChunk, lastChunk); chunk++) {
    for (const span of spansOf(zoneName, chunk)) {
      const previous = spans[spans.length - 1];
      // Chunk starts repeat the offset in force; they are not changes.
      if (previous && previous.offset === span.offset) continue;
      spans.push(span);
    }
  }
  // Drop spans that end before `from`, keeping the one in force at `from`.
  let first = 0;
  while (first + 1 < spans.length && spans[first + 1]!.start <= from) first++;
  return spans.slice(first).filter((span) => span.start < to || span === spans[first]);
}

const floorDiv = (a: number, b: number) => Math.floor(a / b);
const mod = (a: number, b: number) => ((a % b) + b) % b;

/** Enough room before and after a range for the longest local day (25 h) and any offset. */
const MARGIN_SECONDS = 3 * 86_400;

/**
 * Every bucket boundary in [from, to) for a unit of `unitSeconds` on the local clock of the zone
 * whose offsets are `spans` (see the module comment for the rule at offset changes).
 */
function boundariesWithin(spans: readonly OffsetSpan[], unitSeconds: number, from: number, to: number): number[] {
  const boundaries: number[] = [];
  for (let i = 0; i < spans.length; i++) {
    const span = spans[i]!;
    const spanStart = Math.max(span.start, from);
    const spanEnd = Math.min(spans[i + 1]?.start ?? to, to);
    if (spanStart >= spanEnd) continue;
    const previous = spans[i - 1];
    if (previous && span.start >= from) {
      const localBefore = span.start - 1 + previous.offset;
      const localAfter = span.start + span.offset;
      if (mod(localAfter, unitSeconds) === 0 || floorDiv(localBefore, unitSeconds) !== floorDiv(localAfter, unitSeconds)) {
        boundaries.push(span.start);
      }
    }
    // Instants t in the span at which the local clock t + offset is a whole unit.
    let t = spanStart + mod(-(spanStart + span.offset), unitSeconds);
    if (t === span.start && boundaries[boundaries.length - 1] === t) t += unitSeconds;
    for (; t < spanEnd; t += unitSeconds) boundaries.push(t);
  }
  return boundaries;
}

/** Local-clock buckets covering a range: boundaries[i] to boundaries[i + 1] is bucket i. */
export interface BucketPlan {
  zone: string;
  granularity: Granularity;
  unitSeconds: number;
  /** Ascending UTC instants; empty when the requested range is empty. */
  boundaries: number[];
  /** The offset spans covering the buckets, for mapping stored rows to buckets. */
  spans: OffsetSpan[];
}

/**
 * The buckets covering the half-open range [start, end), widened to whole buckets: the first
 * starts at or before `start`, the last ends at or after `end`.
 */
export function planBuckets(zone: string, granularity: Granularity, start: number, end: number): BucketPlan {
  const unitSeconds = GRANULARITY_SECONDS[granularity];
  const plan: BucketPlan = { zone, granularity, unitSeconds, boundaries: [], spans: [] };
  if (end <= start) return plan;
  const from = start - MARGIN_SECONDS;
  const to = end + MARGIN_SECONDS;
  const spans = offsetSpans(zone, from, to);
  const all = boundariesWithin(spans, unitSeconds, from, to);
  const first = lastIndexAtOrBefore(all, start);
  let last = first;
  while (all[last]! < end) last++;
  plan.boundaries = all.slice(first, last + 1);
  const lastBoundary = plan.boundaries[plan.boundaries.length - 1]!;
  plan.spans = offsetSpans(zone, plan.boundaries[0]!, lastBoundary);
  return plan;
}

/** The index of the last element of ascending `values` that is <= `time` (-1 if none). */
export function lastIndexAtOrBefore(values: readonly number[], time: number): number {
  let low = 0;
  let high = values.length - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (values[middle]! <= time) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found;
}

/** The start of the local day (in `zone`) that contains `time`. */
export function startOfLocalDay(zone: string, time: number): number {
  const plan = planBuckets(zone, 'day', time, time + 1);
  return plan.boundaries[0]!;
}

/** Contiguous runs [from, to) of the `width`-aligned buckets that contain the given times. */
export function bucketRuns(times: readonly number[], width: number): Array<[number, number]> {
  // Uploads come in time order: then the times are walked as they are, with no copy and no sort.
  let ordered = true;
  for (let i = 1; i < times.length && ordered; i++) ordered = times[i]! >= times[i - 1]!;
  const starts = ordered ? times : [...new Set(times)].sort((a, b) => a - b);
  const runs: Array<[number, number]> = [];
  for (const time of starts) {
    const start = time - (time % width);
    const last = runs[runs.length - 1];
    if (last && start < last[1]) continue;
    if (last && last[1] === start) last[1] = start + width;
    else runs.push([start, start + width]);
  }
  return runs;
}
