/**
 * The words of minute step samples refused (docs/api.md, "Steps upload"), all-or-nothing, naming
 * the first bad sample: an upload's, from its schema's error (`POST /v1/users/me/activities/steps`),
 * and one record's, checked by hand (`stride import --kind steps`).
 */
import type { ErrorObject } from 'ajv';
import type { MinuteSample, SeriesChange } from '../store/series-writer.js';
import { tooFarAhead, tooFarAheadWords } from './future-times.js';
import { MAX_SAMPLES_PER_REQUEST, seriesChange } from './minute-samples.js';

export { MAX_SAMPLES_PER_REQUEST };

/** A minute of steps. */
export type StepSample = MinuteSample;

export const MAX_STEPS_PER_MINUTE = 1000;

/** The answer to an upload. */
export const ACCEPTED_JSON_SCHEMA = {
  type: 'object',
  required: ['accepted'],
  additionalProperties: false,
  properties: { accepted: { type: 'integer', description: 'how many samples were stored' } },
} as const;

// The words of docs/api.md, shared by the upload's schema words and the import's hand check.
const BODY_WORDS = 'the body must be a JSON object {"samples": [{"start_time": …, "value": …}, …]}';
const SAMPLES_WORDS = 'samples must be an array of {"start_time", "value"} objects';
const OBJECT_WORDS = 'must be an object with start_time and value';
const START_TIME_WORDS = 'start_time must be a non-negative integer (Unix seconds)';
const MINUTE_WORDS = 'start_time must be a multiple of 60 (the start of a minute)';
const FUTURE_WORDS = tooFarAheadWords('start_time');
const VALUE_WORDS = `value must be an integer from 0 to ${MAX_STEPS_PER_MINUTE}`;
const unknownFieldWords = (name: unknown) => `has an unknown field "${String(name).slice(0, 40)}"`;
const repeatWords = (minute: unknown) => `repeats the minute ${String(minute)}; send one sample per minute`;

/** Why one record of steps is invalid, or null (`stride import`). `seen` holds the minutes already in the file. */
export function sampleProblem(sample: unknown, now: number, seen: Set<number>): string | null {
  if (typeof sample !== 'object' || sample === null || Array.isArray(sample)) return OBJECT_WORDS;
  const { start_time: startTime, value, ...rest } = sample as Record<string, unknown>;
  const extra = Object.keys(rest)[0];
  if (extra !== undefined) return unknownFieldWords(extra);
  if (typeof startTime !== 'number' || !Number.isSafeInteger(startTime) || startTime < 0) return START_TIME_WORDS;
  if (startTime % 60 !== 0) return MINUTE_WORDS;
  if (tooFarAhead('start_time', startTime, now) !== null) return FUTURE_WORDS;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_STEPS_PER_MINUTE) return VALUE_WORDS;
  if (seen.has(startTime)) return repeatWords(startTime);
  seen.add(startTime);
  return null;
}

/**
 * The words of a steps upload its schema refused (docs/api.md, "Steps upload"), as the route has
 * said them since its first version: what is wrong with the body, or the first bad sample by its
 * 0-based index (`samples[7] value must be an integer from 0 to 1000; nothing was written`).
 */
export function stepUploadWords(error: ErrorObject): string {
  const [, samples, index, field] = error.instancePath.split('/');
  const params = error.params as Record<string, unknown>;
  if (samples === undefined) {
    if (error.keyword === 'additionalProperties') return `unknown field "${String(params.additionalProperty).slice(0, 40)}"; the body has only "samples"`;
    return error.keyword === 'required' ? SAMPLES_WORDS : BODY_WORDS;
  }
  if (index === undefined) {
    if (error.keyword !== 'maxItems') return SAMPLES_WORDS;
    return `samples has ${(error.data as unknown[]).length} entries; at most ${MAX_SAMPLES_PER_REQUEST} (one week of minutes) per request`;
  }
  return `samples[${index}] ${sampleWords(error, field, params)}; nothing was written`;
}

/** What is wrong with one sample (`field`: the field the error is about, if any). */
function sampleWords(error: ErrorObject, field: string | undefined, params: Record<string, unknown>): string {
  if (field === 'value') return VALUE_WORDS;
  if (field === 'start_time') {
    switch (error.keyword) {
      case 'multipleOf':
        return MINUTE_WORDS;
      case 'notAfterClock':
      case 'maximum':
        return FUTURE_WORDS;
      case 'notRepeated':
        return repeatWords(params.value);
      default:
        return START_TIME_WORDS;
    }
  }
  switch (error.keyword) {
    case 'additionalProperties':
      return unknownFieldWords(params.additionalProperty);
    case 'required':
      return params.missingProperty === 'value' ? VALUE_WORDS : START_TIME_WORDS;
    default:
      return OBJECT_WORDS;
  }
}

/** What an upload changes, for its steps.updated event (docs/webhooks.md). */
export function stepsChange(samples: readonly StepSample[], timezone: string, now: number, coalesceSeconds: number): SeriesChange {
  return seriesChange(samples.map((sample) => sample.start_time), timezone, now, coalesceSeconds);
}
