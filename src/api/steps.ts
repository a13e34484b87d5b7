/**
 * The steps collection (docs/api.md): `GET` a dense series (read_activity), `POST` minute
 * samples (write_activity). Both with and without the trailing slash (the app ignores it).
 */
import type { FastifyInstance } from 'fastify';
import { invalidRequest } from '../errors.js';
import { ACCEPTED_JSON_SCHEMA, parseSampleBatch, SAMPLE_BATCH_JSON_SCHEMA, stepsChange } from '../domain/step-samples.js';
import { createStepSeriesReader, parseSeriesQuery, SERIES_QUERY_JSON_SCHEMA, STEP_SERIES_JSON_SCHEMA } from '../domain/step-series.js';
import { BEARER, errorAnswers } from '../http/schemas.js';
import { refuseSchemaViolation } from '../http/validation.js';
import { requireScope } from './bearer.js';
import { apiRateLimit } from './rate-limit.js';
import { requireJsonBody } from './json-body.js';

export const STEPS_PATH = '/v1/users/me/activities/steps/';

export async function stepRoutes(app: FastifyInstance): Promise<void> {
  const { stores, clock } = app.ctx;
  const limit = apiRateLimit(app);
  const readStepSeries = createStepSeriesReader(stores.steps.sums);
  const tags = ['Steps'];
  const read = {
    tags,
    summary: 'A dense series of step sums per minute, hour or local day (read_activity)',
    security: BEARER,
    querystring: SERIES_QUERY_JSON_SCHEMA,
    response: { 200: STEP_SERIES_JSON_SCHEMA, ...errorAnswers(400, 401, 403) },
  };
  const write = {
    tags,
    summary: 'Store minute samples, all or nothing (write_activity)',
    security: BEARER,
    body: SAMPLE_BATCH_JSON_SCHEMA,
    response: { 200: ACCEPTED_JSON_SCHEMA, ...errorAnswers(400, 401, 403, 413, 415) },
  };

  app.get(STEPS_PATH, { config: limit, schema: read, attachValidation: true, onRequest: requireScope('read_activity') }, (request) => {
    // The profile's zone and the user's write position came with the bearer check.
    const seriesRequest = parseSeriesQuery(request.query as Record<string, unknown>, request.auth.profile.timezone, clock());
    refuseSchemaViolation(request);
    return readStepSeries(request.auth.userId, seriesRequest, request.auth.stepsWrittenAt);
  });

  app.post(STEPS_PATH, { config: limit, schema: write, attachValidation: true, onRequest: requireScope('write_activity'), preValidation: requireJsonBody }, async (request) => {
    const now = clock();
    const batch = parseSampleBatch(request.body, now);
    if ('problem' in batch) throw invalidRequest(batch.problem);
    refuseSchemaViolation(request);
    const change = stepsChange(batch.samples, request.auth.profile.timezone, now, app.ctx.config.webhooks.coalesceSeconds);
    const accepted = await stores.steps.upsertSamples(request.auth.userId, batch.samples, change);
    return { accepted };
  });
}
