/**
 * Sleep sessions (docs/api.md, "Sleep"): `GET` the sessions ending on a range of local dates
 * (read_sleep), `POST` a session and `DELETE` one by id (write_sleep). The collection is served
 * with and without the trailing slash (the app ignores it). Input is checked by the routes'
 * schemas; what a schema cannot say by domain/sleep-sessions.ts, before anything is written.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError, invalidRequest, notFound } from '../errors.js';
import { DATE_RANGE_QUERY_JSON_SCHEMA, dataChange, parseDateRange, profileZone, type DateRangeQuery } from '../domain/local-dates.js';
import {
  SLEEP_DATE_RULES,
  SLEEP_LIST_JSON_SCHEMA,
  SLEEP_SESSION_BODY_JSON_SCHEMA,
  SLEEP_SESSION_JSON_SCHEMA,
  sessionProblem,
  sessionView,
} from '../domain/sleep-sessions.js';
import { BEARER, answer, errorAnswers } from '../http/schemas.js';
import type { SleepSessionInput } from '../store/sleep.js';
import { requireScope } from './bearer.js';
import { requireJsonBody } from './json-body.js';
import { apiRateLimit } from './rate-limit.js';

export const SLEEP_PATH = '/v1/users/me/sleep/';

const tags = ['Sleep'];
const ID_PARAMS = { type: 'object', required: ['id'], properties: { id: { type: 'string', description: 'a session\'s id' } } } as const;
/** The session as it was when the token may read sleep; only its id otherwise (see deletedView). */
const DELETED_SESSION_JSON_SCHEMA = {
  ...SLEEP_SESSION_JSON_SCHEMA,
  required: ['id', 'deleted'],
  properties: { ...SLEEP_SESSION_JSON_SCHEMA.properties, deleted: { type: 'boolean', const: true } },
} as const;

const read = {
  tags,
  summary: 'The sessions that end on a range of local dates, oldest first (read_sleep)',
  security: BEARER,
  querystring: DATE_RANGE_QUERY_JSON_SCHEMA,
  response: { 200: answer('The sleep sessions that end on the dates asked for, oldest first', SLEEP_LIST_JSON_SCHEMA), ...errorAnswers(400, 401, 403) },
};
const write = {
  tags,
  summary: 'Store a session with its stages; the same start_time replaces a stored one, an overlap is 409 (write_sleep)',
  security: BEARER,
  body: SLEEP_SESSION_BODY_JSON_SCHEMA,
  response: { 200: answer('The session as stored, with its id', SLEEP_SESSION_JSON_SCHEMA), ...errorAnswers(400, 401, 403, 409, 413, 415) },
};
const remove = {
  tags,
  summary: 'Delete a session; the answer is the session as it was (its id alone without read_sleep), with "deleted": true (write_sleep)',
  security: BEARER,
  params: ID_PARAMS,
  response: { 200: answer('The session was deleted', DELETED_SESSION_JSON_SCHEMA), ...errorAnswers(401, 403, 404) },
};

export async function sleepRoutes(app: FastifyInstance): Promise<void> {
  const { stores, clock, config } = app.ctx;
  const limit = apiRateLimit(app);

  app.get(SLEEP_PATH, { config: limit, schema: read, onRequest: requireScope('read_sleep') }, async (request) => {
    const range = parseDateRange(request.query as DateRangeQuery, request.auth.profile.timezone, clock(), SLEEP_DATE_RULES);
    const sessions = await stores.sleep.endingWithin(request.auth.userId, range.from, range.to);
    return { timezone: range.timezone, sleep: sessions.map((session) => sessionView(session, range.timezone)) };
  });

  app.post(SLEEP_PATH, { config: limit, schema: write, onRequest: requireScope('write_sleep'), preValidation: requireJsonBody }, async (request) => {
    const now = clock();
    const { start_time, end_time, stages } = request.body as SleepSessionInput;
    const session = { start_time, end_time, stages: stages.map(({ stage, start_time, end_time }) => ({ stage, start_time, end_time })) };
    const problem = sessionProblem(session, now);
    if (problem !== null) throw invalidRequest(`${problem}; nothing was written`);
    const zone = profileZone(request.auth.profile.timezone);
    const outcome = await stores.sleep.save(request.auth.userId, session, dataChange(zone, now, config.webhooks.coalesceSeconds));
    if ('overlaps' in outcome) {
      const other = outcome.overlaps;
      // Named only to an app that may read it: else each refusal would tell a night's times.
      const named = mayReadSleep(request.auth.scopes) ? ` ${other.id} (start_time ${other.start_time}, end_time ${other.end_time})` : '';
      throw new ApiError('conflict', `the session overlaps the stored session${named}; delete that one first, or send its start_time to replace it`);
    }
    return sessionView(outcome.saved, zone);
  });

  app.delete(`${SLEEP_PATH}:id`, { config: limit, schema: remove, onRequest: requireScope('write_sleep') }, async (request) => {
    const zone = profileZone(request.auth.profile.timezone);
    const { id } = request.params as { id: string };
    const removed = await stores.sleep.remove(request.auth.userId, id, dataChange(zone, clock(), config.webhooks.coalesceSeconds));
    if (removed === null) throw notFound('no such sleep session of this user');
    return mayReadSleep(request.auth.scopes) ? { ...sessionView(removed, zone), deleted: true } : { id: removed.id, deleted: true };
  });
}

/**
 * write_sleep does not read (docs/api.md, "Sleep — POST /v1/users/me/sleep/"): answers to writes
 * show a stored session other than the one sent only with read_sleep too — a 409's other session, a
 * deleted session's times and stages.
 */
function mayReadSleep(scopes: readonly string[]): boolean {
  return scopes.includes('read_sleep');
}
