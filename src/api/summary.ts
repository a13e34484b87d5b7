/**
 * The daily summary (docs/api.md): `GET /v1/users/me/summary/daily/` with any valid token, read
 * as domain/daily-summaries.ts reads it.
 */
import type { FastifyInstance } from 'fastify';
import { DAILY_SUMMARY_JSON_SCHEMA, SUMMARY_DATE_RULES } from '../domain/daily-summary.js';
import { dailySummaries } from '../domain/daily-summaries.js';
import { DATE_RANGE_QUERY_JSON_SCHEMA, parseDateRange, type DateRangeQuery } from '../domain/local-dates.js';
import { BEARER, answer, errorAnswers } from '../http/schemas.js';
import { apiRateLimit } from './rate-limit.js';

export const SUMMARY_PATH = '/v1/users/me/summary/daily/';

export async function summaryRoutes(app: FastifyInstance): Promise<void> {
  const { stores, clock } = app.ctx;
  const schema = {
    tags: ['Daily summary'],
    summary:
      'A row per local date: steps, distance, calories, active minutes, resting heart rate, heart-rate zones, minutes asleep and weight, each only with the scope that reads it (any valid token)',
    security: BEARER,
    querystring: DATE_RANGE_QUERY_JSON_SCHEMA,
    response: { 200: answer('One summary per local date of the range; each field only with the scope that reads it', DAILY_SUMMARY_JSON_SCHEMA), ...errorAnswers(400, 401) },
  };

  app.get(SUMMARY_PATH, { config: apiRateLimit(app), schema }, async (request) => {
    const { auth } = request;
    const range = parseDateRange(request.query as DateRangeQuery, auth.profile.timezone, clock(), SUMMARY_DATE_RULES);
    return { timezone: range.timezone, days: await dailySummaries(stores.summary, auth, range) };
  });
}
