/**
 * The heart-rate collection (docs/api.md, "Heart-rate series"): `GET` a dense series
 * (read_heartrate), `POST` readings and `DELETE` a range of minutes (write_heartrate). With and
 * without the trailing slash (the app ignores it). Each route's schema checks its input; the routes
 * check by hand only what a schema cannot say, before anything is written.
 */
import type { FastifyInstance } from 'fastify';
import { invalidRequest } from '../errors.js';
import { HEART_RATE_UPLOAD_JSON_SCHEMA, minutesOfReadings, readingsProblem, type HeartRateReading } from '../domain/heart-rate-readings.js';
import { createHeartRateSeriesReader, HEART_RATE_SERIES_JSON_SCHEMA } from '../domain/heart-rate-series.js';
import { DELETE_RANGE_JSON_SCHEMA, deleteRangeOf, seriesChange } from '../domain/minute-samples.js';
import { ACCEPTED_JSON_SCHEMA } from '../domain/step-samples.js';
import { SERIES_QUERY_JSON_SCHEMA, seriesRequestOf, type SeriesQuery } from '../domain/step-series.js';
import { BEARER, answer, errorAnswers } from '../http/schemas.js';
import { requireScope } from './bearer.js';
import { requireJsonBody } from './json-body.js';
import { apiRateLimit } from './rate-limit.js';

export const HEART_RATE_PATH = '/v1/users/me/heartrate/';

/** A day of readings once a second is about 2.6 MB of JSON. */
export const HEART_RATE_BODY_LIMIT_BYTES = 4 * 1024 * 1024;

const DELETED_JSON_SCHEMA = {
  type: 'object',
  required: ['deleted'],
  additionalProperties: false,
  properties: { deleted: { type: 'integer', description: 'how many of the range\'s minutes held data' } },
} as const;

export async function heartRateRoutes(app: FastifyInstance): Promise<void> {
  const { stores, clock } = app.ctx;
  const limit = apiRateLimit(app);
  const readSeries = createHeartRateSeriesReader(stores.heartRate.readDays);
  const coalesceSeconds = app.ctx.config.webhooks.coalesceSeconds;
  const tags = ['Heart rate'];

  const read = {
    tags,
    summary: 'A dense series of heart rate per minute, hour or local day: avg, min, max, minutes with data; resting per day (read_heartrate)',
    security: BEARER,
    querystring: SERIES_QUERY_JSON_SCHEMA,
    response: { 200: answer('The heart rate series: minimum, average and maximum per minute, hour or day', HEART_RATE_SERIES_JSON_SCHEMA), ...errorAnswers(400, 401, 403) },
  };
  // The body comes as JSON bytes, written without the schema's serializer (domain/heart-rate-series-json.ts).
  app.get(HEART_RATE_PATH, { config: limit, schema: read, onRequest: requireScope('read_heartrate') }, async (request, reply) => {
    const seriesRequest = seriesRequestOf(request.query as SeriesQuery, request.auth.profile.timezone, clock());
    const body = await readSeries(request.auth.userId, seriesRequest);
    return reply.type('application/json; charset=utf-8').send(body);
  });

  const write = {
    tags,
    summary: 'Store readings; each minute\'s readings replace what it held, all or nothing (write_heartrate)',
    security: BEARER,
    body: HEART_RATE_UPLOAD_JSON_SCHEMA,
    response: { 200: answer('Every reading was stored (all or nothing): how many', ACCEPTED_JSON_SCHEMA), ...errorAnswers(400, 401, 403, 413, 415) },
  };
  app.post(
    HEART_RATE_PATH,
    { config: limit, schema: write, bodyLimit: HEART_RATE_BODY_LIMIT_BYTES, onRequest: requireScope('write_heartrate'), preValidation: requireJsonBody },
    async (request) => {
      const now = clock();
      const { samples } = request.body as { samples: HeartRateReading[] };
      const problem = readingsProblem(samples, now);
      if (problem !== null) throw invalidRequest(problem);
      const minutes = minutesOfReadings(samples);
      const change = seriesChange(minutes.map((minute) => minute.start_time), request.auth.profile.timezone, now, coalesceSeconds);
      await stores.heartRate.upsertSamples(request.auth.userId, minutes, change);
      return { accepted: samples.length };
    },
  );

  const remove = {
    tags,
    summary: 'Remove the minutes of a range of at most 31 days (write_heartrate)',
    security: BEARER,
    querystring: DELETE_RANGE_JSON_SCHEMA,
    response: { 200: answer('The readings of the range were deleted: how many', DELETED_JSON_SCHEMA), ...errorAnswers(400, 401, 403) },
  };
  app.delete(HEART_RATE_PATH, { config: limit, schema: remove, onRequest: requireScope('write_heartrate') }, async (request) => {
    const { start: from, end: to } = deleteRangeOf(request.query as { start_time: string; end_time: string });
    const zone = request.auth.profile.timezone;
    return { deleted: await stores.heartRate.deleteRange(request.auth.userId, from, to, (minutes) => seriesChange(minutes, zone, clock(), coalesceSeconds)) };
  });
}
