import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fastJsonStringify from 'fast-json-stringify';
import type { BucketPlan } from '../../src/calendar/step-buckets.js';
import { heartRateSeriesJson } from '../../src/domain/heart-rate-series-json.js';
import { HEART_RATE_SERIES_JSON_SCHEMA } from '../../src/domain/heart-rate-series.js';
import type { SeriesRequest } from '../../src/domain/step-series.js';
import type { HeartRateBuckets } from '../../src/store/heart-rate-series.js';

// What the route's schema serializer writes for the same series, built as objects.
const bySchema = fastJsonStringify(HEART_RATE_SERIES_JSON_SCHEMA as object);
const oneDecimal = (value: number) => Math.round(value * 10) / 10;

function asObjects(request: SeriesRequest, boundaries: number[], buckets: HeartRateBuckets) {
  const heartrate = boundaries.slice(0, -1).map((start, i) => {
    const minutes = buckets.minutes[i]!;
    const bucket: Record<string, unknown> = {
      start_time: start,
      end_time: boundaries[i + 1],
      avg: minutes === 0 ? null : oneDecimal(buckets.sums[i]! / minutes),
      min: minutes === 0 ? null : buckets.min[i],
      max: minutes === 0 ? null : buckets.max[i],
      minutes,
    };
    if (buckets.resting) bucket.resting = buckets.resting[i] ?? null;
    return bucket;
  });
  return { granularity: request.granularity, timezone: request.timezone, start_time: boundaries[0] ?? request.start, end_time: boundaries.at(-1) ?? request.end, heartrate };
}

/** Deterministic pseudo-random numbers (a linear congruential generator). */
function numbers(seed: number) {
  let state = seed;
  return () => ((state = (state * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
}

function series(count: number, unit: number, first: number, withResting: boolean, seed: number) {
  const random = numbers(seed);
  const boundaries = Array.from({ length: count + 1 }, (_, i) => first + i * unit);
  const buckets: HeartRateBuckets = { minutes: new Uint32Array(count), sums: new Float64Array(count), min: new Uint8Array(count), max: new Uint8Array(count), resting: withResting ? [] : null };
  for (let i = 0; i < count; i++) {
    if (random() < 0.2) continue;
    const minutes = 1 + Math.floor(random() * (unit / 60));
    buckets.minutes[i] = minutes;
    // Minute avgs are one-decimal values; their sums give every kind of tenth, .x5 ties included.
    let sum = 0;
    for (let m = 0; m < Math.min(minutes, 30); m++) sum += Math.round((30 + random() * 200) * 10) / 10;
    buckets.sums[i] = minutes > 30 ? sum * (minutes / 30) : sum;
    buckets.min[i] = 30 + Math.floor(random() * 60);
    buckets.max[i] = buckets.min[i]! + Math.floor(random() * 160);
    if (buckets.resting) buckets.resting[i] = random() < 0.3 ? null : Math.round((40 + random() * 40) * 10) / 10;
  }
  return { boundaries, buckets };
}

describe('the heart-rate series as JSON bytes', () => {
  const cases: Array<[string, SeriesRequest, number, number, number, boolean]> = [
    ['a day by minute', { granularity: 'minute', timezone: 'UTC', start: 1_764_115_200, end: 1_764_201_600 }, 1440, 60, 1_764_115_200, false],
    ['hours in a zone', { granularity: 'hour', timezone: 'Asia/Kolkata', start: 1_764_095_400, end: 1_764_700_200 }, 168, 3600, 1_764_095_400, false],
    ['days with resting heart rates', { granularity: 'day', timezone: 'Europe/Berlin', start: 1_764_111_600, end: 1_766_703_600 }, 30, 86_400, 1_764_111_600, true],
    ['days before the epoch\'s first local midnight', { granularity: 'day', timezone: 'Asia/Tokyo', start: 0, end: 86_400 }, 2, 86_400, -32_400, true],
  ];
  for (const [name, request, count, unit, first, withResting] of cases) {
    it(`writes what the schema's serializer writes: ${name}`, () => {
      for (let seed = 1; seed <= 20; seed++) {
        const { boundaries, buckets } = series(count, unit, first, withResting, seed);
        const plan = { boundaries } as BucketPlan;
        const bytes = heartRateSeriesJson(request, plan, buckets);
        assert.equal(bytes.toString('utf8'), bySchema(asObjects(request, boundaries, buckets)));
      }
    });
  }

  it('writes an empty range as the serializer does', () => {
    const request: SeriesRequest = { granularity: 'minute', timezone: 'UTC', start: 120, end: 120 };
    const buckets: HeartRateBuckets = { minutes: new Uint32Array(0), sums: new Float64Array(0), min: new Uint8Array(0), max: new Uint8Array(0), resting: null };
    assert.equal(heartRateSeriesJson(request, { boundaries: [] as number[] } as BucketPlan, buckets).toString(), bySchema(asObjects(request, [], buckets)));
  });
});
