/**
 * The heart-rate series of docs/api.md: the query of the steps series (domain/step-series.ts), and
 * the dense series assembled from the buckets the store computes — avg, min and max of the minutes
 * with data (null without any), how many there are, and for day buckets the resting heart rate.
 */
import { bucketsFromDays, heartRateDaysOf, type HeartRateDayReader } from '../store/heart-rate-series.js';
import { answerKey, heartRateAnswers, type KeptHeartRateAnswers } from './heart-rate-answers.js';
import { heartRateSeriesJson } from './heart-rate-series-json.js';
import { keptPlans } from './kept-plans.js';
import { seriesJsonSchema, type SeriesRequest } from './step-series.js';

const nullableNumber = { type: ['number', 'null'] } as const;
const nullableInteger = { type: ['integer', 'null'] } as const;

export const HEART_RATE_SERIES_JSON_SCHEMA = seriesJsonSchema(
  'heartrate',
  {},
  {
    avg: { ...nullableNumber, description: 'the mean of the minutes\' avgs, one decimal; null when no minute has data' },
    min: { ...nullableInteger, description: 'the lowest reading' },
    max: { ...nullableInteger, description: 'the highest reading' },
    minutes: { type: 'integer', description: 'minutes with data' },
    resting: { ...nullableNumber, description: 'day buckets only: the resting heart rate (docs/api.md), null when the day has too little data' },
  },
  ['avg', 'min', 'max', 'minutes'],
);

/** The series as the JSON bytes of its 200 answer (./heart-rate-series-json.ts). */
export type HeartRateSeriesReader = (userId: string, request: SeriesRequest) => Promise<Buffer>;

/**
 * The series from the days `readDays` reads; an answer written from the same days for the same
 * query is sent again as it was (./heart-rate-answers.ts).
 */
export function createHeartRateSeriesReader(readDays: HeartRateDayReader, answers: KeptHeartRateAnswers = heartRateAnswers()): HeartRateSeriesReader {
  const planOf = keptPlans();
  return async (userId, request) => {
    const plan = planOf(request);
    const rows = await heartRateDaysOf(readDays, userId, plan);
    const key = answerKey(userId, request);
    const kept = answers.find(key, plan, rows);
    if (kept !== undefined) return kept;
    const body = heartRateSeriesJson(request, plan, bucketsFromDays(plan, rows));
    answers.keep(key, plan, rows, body);
    return body;
  };
}
