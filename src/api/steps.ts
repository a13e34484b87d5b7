/**
 * The steps collection (docs/api.md): `GET` a dense series (read_activity), `POST` minute
 * samples (write_activity). Both with and without the trailing slash (the app ignores it).
 */
import type { FastifyInstance } from 'fastify';
import { invalidRequest } from '../errors.js';
import { parseSampleBatch, stepsChange } from '../domain/step-samples.js';
import { createStepSeriesReader, parseSeriesQuery, STEP_SERIES_JSON_SCHEMA } from '../domain/step-series.js';
import { requireScope } from './bearer.js';
import { apiRateLimit } from './rate-limit.js';
import { requireJsonBody } from './json-body.js';

export const STEPS_PATH = '/v1/users/me/activities/steps/';

export async function stepRoutes(app: FastifyInstance): Promise<void> {
  const { stores, clock } = app.ctx;
  const limit = apiRateLimit(app);
  const readStepSeries = createStepSeriesReader(stores.steps.sums);
  const schema = { response: { 200: STEP_SERIES_JSON_SCHEMA } };

  app.get(STEPS_PATH, { config: limit, schema, onRequest: requireScope('read_activity') }, (request) => {
    // The profile's zone and the user's write position came with the bearer check.
    const seriesRequest = parseSeriesQuery(request.query as Record<string, unknown>, request.auth.profile.timezone, clock());
    return readStepSeries(request.auth.userId, seriesRequest, request.auth.stepsWrittenAt);
  });

  app.post(STEPS_PATH, { config: limit, onRequest: requireScope('write_activity'), preValidation: requireJsonBody }, async (request) => {
    const now = clock();
    const batch = parseSampleBatch(request.body, now);
    if ('problem' in batch) throw invalidRequest(batch.problem);
    const change = stepsChange(batch.samples, request.auth.profile.timezone, now, app.ctx.config.webhooks.coalesceSeconds);
    const accepted = await stores.steps.upsertSamples(request.auth.userId, batch.samples, change);
    return { accepted };
  });
}
