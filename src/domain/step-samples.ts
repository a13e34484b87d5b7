/**
 * Validation of minute step samples, shared by `POST /v1/users/me/activities/steps` and `stride
 * import --kind steps` (docs/api.md, "Steps upload"): all-or-nothing, naming the first bad sample.
 */
import type { MinuteSample, SeriesChange } from '../store/minute-series.js';
import { MAX_FUTURE_SECONDS, MAX_SAMPLES_PER_REQUEST, sampleBatchJsonSchema, seriesChange } from './minute-samples.js';

export { MAX_FUTURE_SECONDS, MAX_SAMPLES_PER_REQUEST };

/** A minute of steps, and what an upload of them changed. */
export type StepSample = MinuteSample;
export type StepsChange = SeriesChange;

export const MAX_STEPS_PER_MINUTE = 1000;

/** What `POST /v1/users/me/activities/steps/` accepts (parseSampleBatch enforces it, naming the first bad sample). */
export const SAMPLE_BATCH_JSON_SCHEMA = sampleBatchJsonSchema({ unit: 'steps', maxPerMinute: MAX_STEPS_PER_MINUTE, decimals: 0 });

/** The answer to an upload. */
export const ACCEPTED_JSON_SCHEMA = {
  type: 'object',
  required: ['accepted'],
  additionalProperties: false,
  properties: { accepted: { type: 'integer', description: 'how many samples were stored' } },
} as const;

/** Why one sample is invalid, or null. `seen` holds the minutes already in the batch. */
export function sampleProblem(sample: unknown, now: number, seen: Set<number>): string | null {
  if (typeof sample !== 'object' || sample === null || Array.isArray(sample)) {
    return 'must be an object with start_time and value';
  }
  const { start_time: startTime, value, ...rest } = sample as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) return `has an unknown field "${extra}"`;
  if (typeof startTime !== 'number' || !Number.isSafeInteger(startTime) || startTime < 0) {
    return 'start_time must be a non-negative integer (Unix seconds)';
  }
  if (startTime % 60 !== 0) return 'start_time must be a multiple of 60 (the start of a minute)';
  if (startTime > now + MAX_FUTURE_SECONDS) return 'start_time is more than a day in the future';
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_STEPS_PER_MINUTE) {
    return `value must be an integer from 0 to ${MAX_STEPS_PER_MINUTE}`;
  }
  if (seen.has(startTime)) return `repeats the minute ${startTime}; send one sample per minute`;
  seen.add(startTime);
  return null;
}

export interface InvalidSample {
  index: number;
  message: string;
}

/** Returns the first invalid sample (0-based index), or null when the whole batch is valid. */
export function firstInvalidSample(samples: readonly unknown[], now: number): InvalidSample | null {
  const seen = new Set<number>();
  for (let index = 0; index < samples.length; index++) {
    const message = sampleProblem(samples[index], now, seen);
    if (message !== null) return { index, message };
  }
  return null;
}

/**
 * Checks the body of an upload, `{"samples": [...]}` (docs/api.md), and returns its samples, or the
 * reason the whole batch is refused (naming the first bad sample by its 0-based index).
 */
export function parseSampleBatch(body: unknown, now: number): { samples: StepSample[] } | { problem: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    return { problem: 'the body must be a JSON object {"samples": [{"start_time": …, "value": …}, …]}' };
  }
  const { samples, ...rest } = body as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) return { problem: `unknown field "${extra.slice(0, 40)}"; the body has only "samples"` };
  if (!Array.isArray(samples)) return { problem: 'samples must be an array of {"start_time", "value"} objects' };
  if (samples.length > MAX_SAMPLES_PER_REQUEST) {
    return { problem: `samples has ${samples.length} entries; at most ${MAX_SAMPLES_PER_REQUEST} (one week of minutes) per request` };
  }
  const invalid = firstInvalidSample(samples, now);
  if (invalid) return { problem: `samples[${invalid.index}] ${invalid.message}; nothing was written` };
  return { samples: samples as StepSample[] };
}

/** What an upload changes, for its steps.updated event (docs/webhooks.md). */
export function stepsChange(samples: readonly StepSample[], timezone: string, now: number, coalesceSeconds: number): StepsChange {
  return seriesChange(samples.map((sample) => sample.start_time), timezone, now, coalesceSeconds);
}
