/**
 * Heart-rate uploads (docs/api.md, "Heart-rate upload"): the body's schema, the checks a schema
 * cannot make, and the minutes the readings make — each minute's readings become its avg (rounded
 * to a whole beat), min and max, which replace what the minute held.
 */
import { MAX_BPM, MIN_BPM, type HeartRateMinute } from '../store/series-writer.js';
import { tooFarAhead } from './future-times.js';
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

/** Why a reading whose schema passed cannot be stored — more than a day ahead of `now` — or null; `at` names the reading (`body/samples/3/`). */
export function readingProblem(reading: HeartRateReading, now: number, at: string): string | null {
  return tooFarAhead(`${at}time`, reading.time, now);
}

/** What the schema cannot say: a reading more than a day ahead of the server's clock (a device clock gone wrong). */
export function readingsProblem(readings: readonly HeartRateReading[], now: number): string | null {
  for (let index = 0; index < readings.length; index++) {
    const problem = readingProblem(readings[index]!, now, `body/samples/${index}/`);
    if (problem !== null) return `${problem}; nothing was written`;
  }
  return null;
}

const BPM = { type: 'integer', minimum: MIN_BPM, maximum: MAX_BPM } as const;

/**
 * One stored minute as the person's export holds it and `stride import` takes it back: its start
 * and its readings' avg, min and max (docs/web.md, "Your data").
 */
export const HEART_RATE_MINUTE_JSON_SCHEMA = {
  type: 'object',
  required: ['start_time', 'avg', 'min', 'max'],
  additionalProperties: false,
  properties: {
    start_time: { type: 'integer', minimum: 0, maximum: MAX_TIMESTAMP, multipleOf: 60, description: 'the minute\'s start, Unix seconds' },
    avg: { ...BPM, description: 'the average of the minute\'s readings, rounded' },
    min: { ...BPM, description: 'the lowest reading' },
    max: { ...BPM, description: 'the highest reading' },
  },
} as const;

/** Why a minute whose schema passed cannot be stored — min, avg and max out of order, or ahead of `now` — or null; `at` names the minute. */
export function heartRateMinuteProblem(minute: HeartRateMinute, now: number, at: string): string | null {
  if (minute.min > minute.avg) return `${at}min ${minute.min} must not be above ${at}avg ${minute.avg}`;
  if (minute.avg > minute.max) return `${at}avg ${minute.avg} must not be above ${at}max ${minute.max}`;
  return tooFarAhead(`${at}start_time`, minute.start_time, now);
}

/** The minutes of the readings, in time order. */
export function minutesOfReadings(readings: readonly HeartRateReading[]): HeartRateMinute[] {
  // Devices send readings in time order: then each minute is summed as they come, with no map.
  const minutes: MinuteOfReadings[] = [];
  let last: MinuteOfReadings | undefined;
  for (const { time, bpm } of readings) {
    const start = time - (time % 60);
    if (last !== undefined && start === last.start) add(last, bpm);
    else if (last === undefined || start > last.start) minutes.push((last = { start, count: 1, sum: bpm, min: bpm, max: bpm }));
    else return minutesOfReadingsInAnyOrder(readings);
  }
  return minutes.map(minuteOf);
}

interface MinuteOfReadings {
  start: number;
  count: number;
  sum: number;
  min: number;
  max: number;
}

function add(minute: MinuteOfReadings, bpm: number): void {
  minute.count++;
  minute.sum += bpm;
  if (bpm < minute.min) minute.min = bpm;
  if (bpm > minute.max) minute.max = bpm;
}

const minuteOf = ({ start, count, sum, min, max }: MinuteOfReadings): HeartRateMinute => ({ start_time: start, avg: Math.round(sum / count), min, max });

function minutesOfReadingsInAnyOrder(readings: readonly HeartRateReading[]): HeartRateMinute[] {
  const byMinute = new Map<number, MinuteOfReadings>();
  for (const { time, bpm } of readings) {
    const start = time - (time % 60);
    const minute = byMinute.get(start);
    if (minute === undefined) byMinute.set(start, { start, count: 1, sum: bpm, min: bpm, max: bpm });
    else add(minute, bpm);
  }
  return [...byMinute.values()].sort((a, b) => a.start - b.start).map(minuteOf);
}
