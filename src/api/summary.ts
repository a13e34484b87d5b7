/**
 * The daily summary (docs/api.md, SPEC §4.7): `GET /v1/users/me/summary/daily/` with any valid
 * token. Each kind is read only when the token holds the scope that reads it, every kind in one
 * statement (store/daily-summary.ts), and its fields appear only then (domain/daily-summary.ts).
 */
import type { FastifyInstance } from 'fastify';
import { DAILY_SUMMARY_JSON_SCHEMA, visibleFields } from '../domain/daily-summary.js';
import { createDailySummaryReader } from '../domain/daily-summary-reader.js';
import { DATE_RANGE_QUERY_JSON_SCHEMA, type DateRangeQuery } from '../domain/local-dates.js';
import { BEARER, answer, errorAnswers } from '../http/schemas.js';
import { apiRateLimit } from './rate-limit.js';

export const SUMMARY_PATH = '/v1/users/me/summary/daily/';

export async function summaryRoutes(app: FastifyInstance): Promise<void> {
  const { stores, clock } = app.ctx;
  const readSummary = createDailySummaryReader(stores.summary);
  const schema = {
    tags: ['Daily summary'],
    summary: 'A row per local date: steps, distance, calories, resting heart rate, minutes asleep and weight, each only with the scope that reads it (any valid token)',
    security: BEARER,
    querystring: DATE_RANGE_QUERY_JSON_SCHEMA,
    response: { 200: answer('One summary per local date of the range; each field only with the scope that reads it', DAILY_SUMMARY_JSON_SCHEMA), ...errorAnswers(400, 401) },
  };

  app.get(SUMMARY_PATH, { config: apiRateLimit(app), schema }, async (request) => {
    const { auth } = request;
    const person = { userId: auth.userId, timezone: auth.profile.timezone, strideCm: auth.profile.stride_length_cm };
    return readSummary(person, request.query as DateRangeQuery, visibleFields(auth.scopes), clock());
  });
}
