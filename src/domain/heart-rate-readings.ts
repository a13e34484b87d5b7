/**
 * Heart-rate uploads (docs/api.md, "Heart-rate upload"): the body's schema, the checks a schema
 * cannot make, and the minutes the readings make — each minute's readings become its avg (rounded
 * to a whole beat), min and max, which replace what the minute held.
 */
import { DateTime } from 'luxon';
import { bucketRuns } from '../calendar/step-buckets.js';
import { MAX_BPM, MIN_BPM, type HeartRateChange, type HeartRateMinute } from '../store/heart-rate.js';
import { MAX_FUTURE_SECONDS } from './step-samples.js';
import { MAX_TIMESTAMP } from './step-series.js';

/** A day of readings once a second. */
export const MAX_READINGS_PER_REQUEST = 86_400;

export interface HeartRateReading {
  time: number;
  bpm: number;
}

export const HEART_RATE_UPLOAD_JSON_SCHEMA = {
  type: 'object',
  required: ['samples'],
  additionalProperties: false,
  properties: {
    samples: {
      type: 'array',
      maxItems: MAX_READINGS_PER_REQUEST,
      description: 'readings at any second; the readings of one minute replace what that minute held',
      items: {
        type: 'object',
        required: ['time', 'bpm'],
        additionalProperties: false,
        properties: {
          time: { type: 'integer', minimum: 0, maximum: MAX_TIMESTAMP, description: 'Unix seconds; at most a day ahead of the server\'s clock' },
          bpm: { type: 'integer', minimum: MIN_BPM, maximum: MAX_BPM, description: 'beats per minute' },
        },
      },
    },
  },
} as const;

/** What the schema cannot say: a reading more than a day ahead of the server's clock (a device clock gone wrong). */
export function readingsProblem(readings: readonly HeartRateReading[], now: number): string | null {
  const index = readings.findIndex((reading) => reading.time > now + MAX_FUTURE_SECONDS);
  return index === -1 ? null : `body/samples/${index}/time is more than a day after the server's clock; nothing was written`;
}

/** The minutes of the readings, in time order. */
export function minutesOfReadings(readings: readonly HeartRateReading[]): HeartRateMinute[] {
  const byMinute = new Map<number, { count: number; sum: number; min: number; max: number }>();
  for (const { time, bpm } of readings) {
    const start = time - (time % 60);
    const minute = byMinute.get(start);
    if (minute === undefined) byMinute.set(start, { count: 1, sum: bpm, min: bpm, max: bpm });
    else {
      minute.count++;
      minute.sum += bpm;
      if (bpm < minute.min) minute.min = bpm;
      if (bpm > minute.max) minute.max = bpm;
    }
  }
  return [...byMinute]
    .sort(([a], [b]) => a - b)
    .map(([start_time, { count, sum, min, max }]) => ({ start_time, avg: Math.round(sum / count), min, max }));
}

/**
 * What a write changes, for its heartrate.updated event (docs/webhooks.md): the minute ranges,
 * merged, and the dates in the user's zone that they touch.
 */
export function heartRateChange(minuteStarts: readonly number[], timezone: string, now: number, coalesceSeconds: number): HeartRateChange {
  const ranges = bucketRuns(minuteStarts, 60).map(([start_time, end_time]) => ({ start_time, end_time }));
  const dates = new Set<string>();
  for (const { start_time, end_time } of ranges) {
    const last = DateTime.fromSeconds(end_time - 1, { zone: timezone }).toISODate()!;
    for (let day = DateTime.fromSeconds(start_time, { zone: timezone }).startOf('day'); ; day = day.plus({ days: 1 })) {
      const date = day.toISODate()!;
      dates.add(date);
      if (date >= last) break;
    }
  }
  return { ranges, dates: [...dates].sort(), now, coalesceSeconds };
}
