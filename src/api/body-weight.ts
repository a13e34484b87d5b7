/**
 * Body weight (docs/api.md, "Body weight"): `GET` the measurements of a range of local dates
 * (read_body), `POST` a measurement and `DELETE` one by id (write_body). The collection is served
 * with and without the trailing slash. Input is checked by the routes' schemas; what a schema
 * cannot say by domain/body-weight.ts, before anything is written.
 */
import type { FastifyInstance } from 'fastify';
import { invalidRequest, notFound } from '../errors.js';
import {
  WEIGHT_BODY_JSON_SCHEMA,
  WEIGHT_DATE_RULES,
  WEIGHT_JSON_SCHEMA,
  WEIGHT_LIST_JSON_SCHEMA,
  weightInput,
  weightProblem,
  weightView,
  type WeightBody,
} from '../domain/body-weight.js';
import { DATE_RANGE_QUERY_JSON_SCHEMA, dataChange, parseDateRange, profileZone, type DateRangeQuery } from '../domain/local-dates.js';
import { BEARER, answer, errorAnswers } from '../http/schemas.js';
import { requireScope } from './bearer.js';
import { requireJsonBody } from './json-body.js';
import { apiRateLimit } from './rate-limit.js';

export const WEIGHT_PATH = '/v1/users/me/body/weight/';

const tags = ['Body'];
const ID_PARAMS = { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'a measurement\'s id' } } } as const;
/** The measurement as it was when the token may read body data; only its id otherwise (see the DELETE route). */
const DELETED_WEIGHT_JSON_SCHEMA = {
  ...WEIGHT_JSON_SCHEMA,
  required: ['id', 'deleted'],
  properties: { ...WEIGHT_JSON_SCHEMA.properties, deleted: { type: 'boolean', const: true } },
} as const;

const read = {
  tags,
  summary: 'The weight measurements of a range of local dates, oldest first (read_body)',
  security: BEARER,
  querystring: DATE_RANGE_QUERY_JSON_SCHEMA,
  response: { 200: answer('The measurements of the dates asked for, oldest first', WEIGHT_LIST_JSON_SCHEMA), ...errorAnswers(400, 401, 403) },
};
const write = {
  tags,
  summary: 'Store a weight measurement; the same time replaces a stored one (write_body)',
  security: BEARER,
  body: WEIGHT_BODY_JSON_SCHEMA,
  response: { 200: answer('The measurement as stored, with its id', WEIGHT_JSON_SCHEMA), ...errorAnswers(400, 401, 403, 413, 415) },
};
const remove = {
  tags,
  summary: 'Delete a measurement; the answer is the measurement as it was (its id alone without read_body), with "deleted": true (write_body)',
  security: BEARER,
  params: ID_PARAMS,
  response: { 200: answer('The measurement was deleted', DELETED_WEIGHT_JSON_SCHEMA), ...errorAnswers(401, 403, 404) },
};

export async function bodyWeightRoutes(app: FastifyInstance): Promise<void> {
  const { stores, clock, config } = app.ctx;
  const limit = apiRateLimit(app);

  app.get(WEIGHT_PATH, { config: limit, schema: read, onRequest: requireScope('read_body') }, async (request) => {
    const range = parseDateRange(request.query as DateRangeQuery, request.auth.profile.timezone, clock(), WEIGHT_DATE_RULES);
    const weights = await stores.bodyWeight.within(request.auth.userId, range.from, range.to);
    return { timezone: range.timezone, weight: weights.map(weightView) };
  });

  app.post(WEIGHT_PATH, { config: limit, schema: write, onRequest: requireScope('write_body'), preValidation: requireJsonBody }, async (request) => {
    const now = clock();
    const body = request.body as WeightBody;
    const problem = weightProblem(body, now);
    if (problem !== null) throw invalidRequest(`${problem}; nothing was written`);
    const zone = profileZone(request.auth.profile.timezone);
    // The measurement sent, as stored: a replacement writes every value, so nothing of the one it
    // replaced shows but the id it keeps (which tells nothing to an app that never saw that id).
    return weightView(await stores.bodyWeight.save(request.auth.userId, weightInput(body), dataChange(zone, now, config.webhooks.coalesceSeconds)));
  });

  app.delete(`${WEIGHT_PATH}:id`, { config: limit, schema: remove, onRequest: requireScope('write_body') }, async (request) => {
    const zone = profileZone(request.auth.profile.timezone);
    const { id } = request.params as { id: string };
    const removed = await stores.bodyWeight.remove(request.auth.userId, id, dataChange(zone, clock(), config.webhooks.coalesceSeconds));
    if (removed === null) throw notFound('no such weight measurement of this user');
    // A measurement sent again by another app (a scale) keeps its id: the values deleted may not be the ones this app sent.
    return mayReadBody(request.auth.scopes) ? { ...weightView(removed), deleted: true } : { id: removed.id, deleted: true };
  });
}

/**
 * write_body does not read (docs/api.md, "Body weight — DELETE …"), as write_sleep does not
 * (api/sleep.ts): a DELETE answers the deleted measurement's values only to a token that also holds
 * read_body.
 */
function mayReadBody(scopes: readonly string[]): boolean {
  return scopes.includes('read_body');
}
