/**
 * The daily summary (docs/api.md, SPEC §4.7): `GET /v1/users/me/summary/daily/` with any valid
 * token. Each kind is read only when the token holds the scope that reads it, every kind in one
 * statement (store/daily-summary.ts), and its fields appear only then (domain/daily-summary.ts).
 */
import type { FastifyInstance } from 'fastify';
import { DAILY_SUMMARY_JSON_SCHEMA, SUMMARY_DATE_RULES, summaryDays, visibleFields, type SummarySources } from '../domain/daily-summary.js';
import { DATE_RANGE_QUERY_JSON_SCHEMA, keptDateRanges, type DateRangeQuery } from '../domain/local-dates.js';
import { keptPlans } from '../domain/step-series.js';
import { SUM_METRIC_STORAGE } from '../store/minute-series.js';
import { BEARER, answer, errorAnswers } from '../http/schemas.js';
import { SUMMARY_KINDS } from '../store/daily-summary.js';
import { apiRateLimit } from './rate-limit.js';

export const SUMMARY_PATH = '/v1/users/me/summary/daily/';

/** Sums per day in the API's unit (calories are stored in tenths). */
const inUnits = (sums: readonly number[], scale: number) => (scale === 1 ? sums : sums.map((sum) => sum / scale));

export async function summaryRoutes(app: FastifyInstance): Promise<void> {
  const { stores, clock } = app.ctx;
  const planOf = keptPlans();
  const rangeOf = keptDateRanges(SUMMARY_DATE_RULES);
  const schema = {
    tags: ['Daily summary'],
    summary: 'A row per local date: steps, distance, calories, resting heart rate, minutes asleep and weight, each only with the scope that reads it (any valid token)',
    security: BEARER,
    querystring: DATE_RANGE_QUERY_JSON_SCHEMA,
    response: { 200: answer('One summary per local date of the range; each field only with the scope that reads it', DAILY_SUMMARY_JSON_SCHEMA), ...errorAnswers(400, 401) },
  };

  app.get(SUMMARY_PATH, { config: apiRateLimit(app), schema }, async (request) => {
    const { auth } = request;
    const range = rangeOf(request.query as DateRangeQuery, auth.profile.timezone, clock());
    const plan = planOf({ timezone: range.timezone, granularity: 'day', start: range.from, end: range.to });
    const fields = visibleFields(auth.scopes);
    const kinds =
      (fields.has('steps') ? SUMMARY_KINDS.activity : 0) |
      (fields.has('resting_heart_rate') ? SUMMARY_KINDS.heartRate : 0) |
      (fields.has('minutes_asleep') ? SUMMARY_KINDS.sleep : 0) |
      (fields.has('weight') ? SUMMARY_KINDS.weight : 0);
    const figures = await stores.summary.figures(auth.userId, plan, range, kinds, auth.profile.stride_length_cm);
    const sources: SummarySources = {
      ...figures,
      calories: figures.calories && inUnits(figures.calories, SUM_METRIC_STORAGE.calories.scale),
    };
    return { timezone: range.timezone, days: summaryDays(plan.boundaries, range.timezone, fields, sources) };
  });
}
