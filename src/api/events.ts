/**
 * What an app reads and manages with its own client credentials (HTTP Basic; docs/webhooks.md):
 * its event feed, `GET /v1/events`, and its webhook endpoints under `/v1/webhooks`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { App } from '../store/apps.js';
import { ApiError, invalidRequest, notFound } from '../errors.js';
import { rateLimitConfig } from '../http/rate-limit.js';
import { useApiSecurityHeaders } from '../http/security-headers.js';
import { authenticateClient } from '../oauth/client-auth.js';
import { refuseSchemaViolation } from '../http/validation.js';
import { addEndpoint, EndpointInputError, parseEventTypes, publicEndpoint, SECRET_OVERLAP_SECONDS, updateEndpoint } from '../webhooks/endpoints.js';
import { ADD, CHANGE, DELETE, FEED, LIST, ROTATE } from './event-schemas.js';
import { requireJsonBody } from './json-body.js';

const MAX_PAGE = 1000;

export async function eventRoutes(app: FastifyInstance): Promise<void> {
  const { stores, config, clock } = app.ctx;
  useApiSecurityHeaders(app);
  const limit = { config: rateLimitConfig(config.rateLimits.token, 'token') };

  /** The calling app: confidential clients only (a public client's id is no proof of anything). */
  const callingApp = async (request: FastifyRequest): Promise<App> => {
    const { app: client, method } = await authenticateClient(stores.apps, {}, request.headers.authorization ?? '');
    if (method === 'none') throw new ApiError('invalid_client', 'the feed and webhooks need a confidential client and its secret (HTTP Basic)');
    return client;
  };
  const ownEndpoint = async (request: FastifyRequest) => {
    const client = await callingApp(request);
    const endpoint = await stores.webhooks.find((request.params as { id: string }).id);
    if (!endpoint || endpoint.app_id !== client.id) throw notFound('no such webhook endpoint of this app');
    return endpoint;
  };
  const checked = async <T>(make: () => Promise<T>): Promise<T> => {
    try {
      return await make();
    } catch (error) {
      if (error instanceof EndpointInputError) throw invalidRequest(error.message);
      throw error;
    }
  };

  app.get('/v1/events', { ...limit, schema: FEED, attachValidation: true }, async (request) => {
    const client = await callingApp(request);
    const query = request.query as Record<string, unknown>;
    const after = query.after;
    if (after !== undefined && (typeof after !== 'string' || after === '')) throw invalidRequest('after must be a cursor from next_cursor');
    const size = query.limit === undefined ? 100 : Number(query.limit);
    if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE) throw invalidRequest(`limit must be a whole number from 1 to ${MAX_PAGE}`);
    refuseSchemaViolation(request);
    const page = await stores.webhooks.feed(client.id, (after as string | undefined) ?? null, size);
    if (page === null) throw invalidRequest('after is not a cursor this feed gave');
    return page;
  });

  app.get('/v1/webhooks', { ...limit, schema: LIST, attachValidation: true }, async (request) => {
    const client = await callingApp(request);
    return { data: (await stores.webhooks.list(client.id)).map(publicEndpoint) };
  });

  app.post('/v1/webhooks', { ...limit, schema: ADD, attachValidation: true, preValidation: requireJsonBody }, async (request) => {
    const client = await callingApp(request);
    const body = jsonObject(request.body);
    if (typeof body.url !== 'string') throw invalidRequest('url is required: the https:// address to send events to');
    if (typeof body.events !== 'string' && !isStringArray(body.events)) throw invalidRequest('events is required: a list of event types');
    await checked(async () => parseEventTypes(body.events as string | string[]));
    refuseSchemaViolation(request);
    const endpoint = await checked(() => addEndpoint(stores.webhooks, config, client.id, { url: body.url as string, events: body.events as string[] }, clock()));
    return { ...publicEndpoint(endpoint), secret: endpoint.secret };
  });

  app.patch('/v1/webhooks/:id', { ...limit, schema: CHANGE, attachValidation: true, preValidation: requireJsonBody }, async (request) => {
    const endpoint = await ownEndpoint(request);
    const body = jsonObject(request.body);
    if (body.url !== undefined && typeof body.url !== 'string') throw invalidRequest('url must be a string');
    if (body.events !== undefined && !isStringArray(body.events)) throw invalidRequest('events must be a list of event types');
    if (body.state !== undefined && body.state !== 'active' && body.state !== 'paused') throw invalidRequest('state must be "active" or "paused"');
    if (body.events !== undefined) await checked(async () => parseEventTypes(body.events as string[]));
    refuseSchemaViolation(request);
    const input = { url: body.url as string | undefined, events: body.events as string[] | undefined, state: body.state as 'active' | 'paused' | undefined };
    const updated = await checked(() => updateEndpoint(stores.webhooks, config, endpoint.id, input, clock()));
    return publicEndpoint(updated!);
  });

  app.post('/v1/webhooks/:id/rotate-secret', { ...limit, schema: ROTATE, attachValidation: true }, async (request) => {
    const endpoint = await ownEndpoint(request);
    const rotated = (await stores.webhooks.rotateSecret(endpoint.id, clock(), SECRET_OVERLAP_SECONDS))!;
    return { ...publicEndpoint(rotated), secret: rotated.secret, previous_secret_until: rotated.previous_secret_until };
  });

  // Success is 200 with a body everywhere (the seed's §7); the answer says what was deleted.
  app.delete('/v1/webhooks/:id', { ...limit, schema: DELETE, attachValidation: true }, async (request) => {
    const endpoint = await ownEndpoint(request);
    if (!(await stores.webhooks.delete(endpoint.id))) throw notFound('no such webhook endpoint of this app');
    return { ...publicEndpoint(endpoint), deleted: true };
  });
}

function jsonObject(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw invalidRequest('the body must be a JSON object');
  return body as Record<string, unknown>;
}

function isStringArray(value: unknown): value is string[] {
  return Array.isArray(value) && value.every((item) => typeof item === 'string');
}
