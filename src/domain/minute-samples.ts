/**
 * Uploads and deletes of the sum metrics (steps, distance, calories): the schemas, which decide
 * (with Stride's keywords for a minute sent twice and a minute more than a day ahead,
 * http/validation.ts), what a schema cannot say (the order and length of a range), and the change
 * a write makes, for its event (docs/api.md, docs/webhooks.md).
 */
import { bucketRuns } from '../calendar/step-buckets.js';
import { MAX_AHEAD_SECONDS, tooFarAhead } from './future-times.js';
import { invalidRequest } from '../errors.js';
import type { MinuteRange } from '../store/dated-ranges.js';
import type { SeriesChange } from '../store/series-writer.js';
import { changeOfRanges } from './local-dates.js';
import { MAX_TIMESTAMP } from './step-series.js';

export const MAX_SAMPLES_PER_REQUEST = 10_080;
/** The longest range one DELETE removes (docs/api.md, "Deleting minutes", "Heart-rate delete"). */
export const MAX_DELETE_SECONDS = 31 * 86_400;

/**
 * What POST accepts for a metric: §4.3's body, with the metric's range and decimals. The schema
 * decides everything about an upload; a batch is refused at its first bad sample.
 */
export function sampleBatchJsonSchema(definition: { unit: string; maxPerMinute: number; decimals: 0 | 1 }) {
  const value =
    definition.decimals === 0
      ? { type: 'integer', minimum: 0, maximum: definition.maxPerMinute, description: definition.unit }
      : { type: 'number', minimum: 0, maximum: definition.maxPerMinute, multipleOf: 0.1, description: `${definition.unit}, at most one decimal` };
  return {
    type: 'object',
    required: ['samples'],
    additionalProperties: false,
    properties: {
      samples: {
        type: 'array',
        maxItems: MAX_SAMPLES_PER_REQUEST,
        description: 'one sample per minute; a minute sent again replaces its value',
        items: {
          type: 'object',
          required: ['start_time', 'value'],
          additionalProperties: false,
          properties: {
            start_time: {
              type: 'integer',
              minimum: 0,
              maximum: MAX_TIMESTAMP,
              multipleOf: 60,
              notAfterClock: MAX_AHEAD_SECONDS,
              description: 'the minute\'s start, Unix seconds; at most a day ahead of the server\'s clock',
            },
            value,
          },
          notRepeated: { field: 'start_time', what: 'minute' },
        },
      },
    },
  } as const;
}

/** The query of a DELETE: the range [start_time, end_time) of the minutes to remove. */
export const DELETE_RANGE_JSON_SCHEMA = {
  type: 'object',
  required: ['start_time', 'end_time'],
  additionalProperties: false,
  properties: {
    start_time: { type: 'integer', minimum: 0, maximum: MAX_TIMESTAMP, description: 'Unix seconds: the first minute removed is the one starting at or after it' },
    end_time: { type: 'integer', minimum: 0, maximum: MAX_TIMESTAMP, description: 'Unix seconds, at most 31 days after start_time: minutes starting before it are removed' },
  },
} as const;

export const DELETED_JSON_SCHEMA = {
  type: 'object',
  required: ['deleted'],
  additionalProperties: false,
  properties: { deleted: { type: 'integer', description: 'how many minutes of the range held a value' } },
} as const;

/**
 * Why a minute cannot be stored — more than a day ahead of `now` — or null; `at` names the sample
 * (`distance/3/`). For `stride import`, which checks records one at a time without the schema's
 * clock keyword (`notAfterClock`).
 */
export function minuteStartProblem(startTime: number, now: number, at: string): string | null {
  return tooFarAhead(`${at}start_time`, startTime, now);
}

/** The range of a DELETE whose schema passed: [start, end), in order and at most 31 days long. */
export function deleteRangeOf(query: { start_time: number | string; end_time: number | string }): { start: number; end: number } {
  const start = Number(query.start_time);
  const end = Number(query.end_time);
  if (end < start) throw invalidRequest(`end_time ${end} is before start_time ${start}`);
  if (end - start > MAX_DELETE_SECONDS) throw invalidRequest('the range from start_time to end_time is longer than 31 days, the most one DELETE removes');
  return { start, end };
}

/**
 * What a write of minutes changes, as its event tells it (docs/webhooks.md): the dates in the
 * user's zone of the minutes written or removed and, per date, one range from its first such
 * minute to the end of its last — however the minutes are spread over the date.
 */
export function minutesChange(minuteStarts: readonly number[], timezone: string): { dates: string[]; ranges: MinuteRange[] } {
  return changeOfRanges(bucketRuns(minuteStarts, 60).map(([start_time, end_time]) => ({ start_time, end_time })), timezone);
}

/** minutesChange with the write's time and WEBHOOK_COALESCE: the change a store records. */
export function seriesChange(minuteStarts: readonly number[], timezone: string, now: number, coalesceSeconds: number): SeriesChange {
  return { ...minutesChange(minuteStarts, timezone), now, coalesceSeconds };
}
