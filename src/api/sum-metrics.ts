/**
 * The collections of the minute metrics whose buckets hold sums (docs/api.md): steps, distance and
 * calories, each made by sumMetricRoutes. `GET` a dense series (read_activity), `POST` minute
 * samples and `DELETE` a range of minutes (write_activity), with and without the trailing slash
 * (the app ignores it).
 *
 * Each route's schema decides: a violation is answered 400 before the handler runs (app.ts), and
 * the handler checks only what a schema cannot say. Steps GET and POST word a violation as they
 * have since their first version, which docs/api.md quotes (`samples[7] …; nothing was written`).
 */
import type { FastifyInstance } from 'fastify';
import { DELETE_RANGE_JSON_SCHEMA, DELETED_JSON_SCHEMA, deleteRangeOf, sampleBatchJsonSchema, seriesChange } from '../domain/minute-samples.js';
import { ACCEPTED_JSON_SCHEMA, stepUploadWords } from '../domain/step-samples.js';
import { createSeriesReader, SERIES_QUERY_JSON_SCHEMA, seriesRequestOf, stepSeriesQueryWords, sumSeriesJsonSchema, type SeriesQuery } from '../domain/step-series.js';
import { SUM_METRICS, type SumMetricDefinition } from '../domain/sum-metrics.js';
import { BEARER, answer, errorAnswers } from '../http/schemas.js';
import { wordedBy, type Wording } from '../http/validation.js';
import type { MinuteSample, SumMetric } from '../store/series-writer.js';
import { requireScope } from './bearer.js';
import { apiRateLimit } from './rate-limit.js';
import { requireJsonBody } from './json-body.js';

/** The routes that word a violation of their schema their own way: a series query's, an upload's. */
const OWN_WORDS: Partial<Record<SumMetric, { read: Wording; write: Wording }>> = {
  steps: { read: stepSeriesQueryWords, write: stepUploadWords },
};

export const STEPS_PATH = SUM_METRICS.steps.path;

export async function sumMetricRoutes(app: FastifyInstance, definition: SumMetricDefinition): Promise<void> {
  const { stores, clock } = app.ctx;
  const { metric, path } = definition;
  const store = stores[metric];
  const scale = 10 ** definition.decimals;
  const limit = apiRateLimit(app);
  const coalesceSeconds = app.ctx.config.webhooks.coalesceSeconds;
  const readSeries = createSeriesReader(store.sums, metric, scale);
  const tags = [definition.tag];
  const read = {
    tags,
    summary: `A dense series of ${definition.unit} summed per minute, hour or local day (read_activity)`,
    security: BEARER,
    querystring: SERIES_QUERY_JSON_SCHEMA,
    response: { 200: answer(`The ${metric} series: one bucket per minute, hour or day of the range, empty ones included`, sumSeriesJsonSchema(metric, definition.decimals === 0 ? 'integer' : 'number')), ...errorAnswers(400, 401, 403) },
  };
  const write = {
    tags,
    summary: `Store minute samples of ${definition.unit}, all or nothing (write_activity)`,
    security: BEARER,
    body: sampleBatchJsonSchema(definition),
    response: { 200: answer('Every sample was stored (all or nothing): how many were added or replaced', ACCEPTED_JSON_SCHEMA), ...errorAnswers(400, 401, 403, 413, 415) },
  };
  const remove = {
    tags,
    summary: 'Remove the minutes of a range of at most 31 days (write_activity)',
    security: BEARER,
    querystring: DELETE_RANGE_JSON_SCHEMA,
    response: { 200: answer('The samples of the range were deleted: how many', DELETED_JSON_SCHEMA), ...errorAnswers(400, 401, 403) },
  };
  const readScope = { config: limit, onRequest: requireScope('read_activity') };
  const writeScope = { config: limit, onRequest: requireScope('write_activity') };

  const words = OWN_WORDS[metric];
  const readWords = words && { schemaErrorFormatter: wordedBy(words.read) };
  const writeWords = words && { schemaErrorFormatter: wordedBy(words.write) };

  app.get(path, { ...readScope, ...readWords, schema: read }, (request) => {
    // The profile's zone and the user's write position came with the bearer check.
    const seriesRequest = seriesRequestOf(request.query as SeriesQuery, request.auth.profile.timezone, clock());
    return readSeries(request.auth.userId, seriesRequest, request.auth.stepsWrittenAt, request.auth.profile.stride_length_cm);
  });

  app.post(path, { ...writeScope, ...writeWords, schema: write, preValidation: requireJsonBody }, async (request) => {
    const now = clock();
    const { samples } = request.body as { samples: MinuteSample[] };
    return { accepted: await upload(request.auth.userId, request.auth.profile.timezone, samples, now) };
  });

  app.delete(path, { ...writeScope, schema: remove }, async (request) => {
    const { start, end } = deleteRangeOf(request.query as { start_time: string; end_time: string });
    const now = clock();
    const changeOf = (minutes: readonly number[]) => seriesChange(minutes, request.auth.profile.timezone, now, coalesceSeconds);
    return { deleted: await store.deleteRange(request.auth.userId, start, end, changeOf) };
  });

  function upload(userId: string, timezone: string, samples: readonly MinuteSample[], now: number): Promise<number> {
    const change = seriesChange(samples.map((sample) => sample.start_time), timezone, now, coalesceSeconds);
    return store.upsertSamples(userId, samples, change);
  }
}
