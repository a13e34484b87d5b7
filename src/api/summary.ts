/**
 * The daily summary (docs/api.md, SPEC §4.7): `GET /v1/users/me/summary/daily/` with any valid
 * token. Each kind is read only when the token holds the scope that reads it, all at once, and its
 * fields appear only then (domain/daily-summary.ts).
 */
import type { FastifyInstance } from 'fastify';
import { DAILY_SUMMARY_JSON_SCHEMA, SUMMARY_DATE_RULES, summaryDays, visibleFields, type SummarySources } from '../domain/daily-summary.js';
import { DATE_RANGE_QUERY_JSON_SCHEMA, parseDateRange, type DateRangeQuery } from '../domain/local-dates.js';
import { keptPlans } from '../domain/step-series.js';
import { SUM_METRIC_STORAGE } from '../store/minute-series.js';
import { BEARER, answer, errorAnswers } from '../http/schemas.js';
import { heartRateBuckets } from '../store/heart-rate-series.js';
import { apiRateLimit } from './rate-limit.js';

export const SUMMARY_PATH = '/v1/users/me/summary/daily/';

/** Sums per day in the API's unit (calories are stored in tenths). */
const inUnits = (sums: readonly number[], scale: number) => (scale === 1 ? sums : sums.map((sum) => sum / scale));

export async function summaryRoutes(app: FastifyInstance): Promise<void> {
  const { stores, clock } = app.ctx;
  const planOf = keptPlans();
  const schema = {
    tags: ['Daily summary'],
    summary: 'A row per local date: steps, distance, calories, resting heart rate, minutes asleep and weight, each only with the scope that reads it (any valid token)',
    security: BEARER,
    querystring: DATE_RANGE_QUERY_JSON_SCHEMA,
    response: { 200: answer('One summary per local date of the range; each field only with the scope that reads it', DAILY_SUMMARY_JSON_SCHEMA), ...errorAnswers(400, 401) },
  };

  app.get(SUMMARY_PATH, { config: apiRateLimit(app), schema }, async (request) => {
    const { auth } = request;
    const range = parseDateRange(request.query as DateRangeQuery, auth.profile.timezone, clock(), SUMMARY_DATE_RULES);
    const plan = planOf({ timezone: range.timezone, granularity: 'day', start: range.from, end: range.to });
    const fields = visibleFields(auth.scopes);
    const activity = fields.has('steps');
    const [steps, distance, calories, heartRate, sleep, weights] = await Promise.all([
      activity ? stores.steps.sums(auth.userId, plan, auth.stepsWrittenAt) : undefined,
      activity ? stores.distance.sums(auth.userId, plan, auth.stepsWrittenAt, auth.profile.stride_length_cm) : undefined,
      activity ? stores.calories.sums(auth.userId, plan, auth.stepsWrittenAt) : undefined,
      fields.has('resting_heart_rate') ? heartRateBuckets(stores.heartRate.readDays, auth.userId, plan) : undefined,
      fields.has('minutes_asleep') ? stores.sleep.endingWithin(auth.userId, range.from, range.to) : undefined,
      fields.has('weight') ? stores.bodyWeight.within(auth.userId, range.from, range.to) : undefined,
    ]);
    const sources: SummarySources = {
      steps,
      distance,
      calories: calories && inUnits(calories, SUM_METRIC_STORAGE.calories.scale),
      resting: heartRate?.resting ?? undefined,
      sleep,
      weights,
    };
    return { timezone: range.timezone, days: summaryDays(plan.boundaries, range.timezone, fields, sources) };
  });
}
