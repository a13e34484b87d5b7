/**
 * The HTTP side of dynamic client registration (RFC 7591 §3) and its management (RFC 7592 §2): JSON
 * in and out, the schema deciding the types; the rules are registration.ts's. While REGISTRATION is
 * off every route answers 404.
 */
import type { FastifyInstance } from 'fastify';
import { bearerToken } from '../http/bearer-token.js';
import { rateLimitConfig } from '../http/rate-limit.js';
import { useApiSecurityHeaders } from '../http/security-headers.js';
import { NO_STORE_HEADERS } from './issue-tokens.js';
import {
  checkInitialAccessToken,
  clientInformation,
  deleteRegisteredClient,
  registerClient,
  registeredClient,
  requireRegistrationEnabled,
  updateRegisteredClient,
  type ClientMetadataInput,
} from './registration.js';
import { REGISTER, REGISTERED_CLIENT_DELETE, REGISTERED_CLIENT_READ, REGISTERED_CLIENT_UPDATE } from './registration-schemas.js';

export async function registrationRoutes(app: FastifyInstance): Promise<void> {
  const ctx = app.ctx;
  useApiSecurityHeaders(app);
  const limit = { config: rateLimitConfig(ctx.config.rateLimits.token, 'token') };
  /** A header with no Bearer token in it counts as a wrong one, not a missing one. */
  const tokenOf = (request: Parameters<typeof bearerToken>[0]) => {
    const token = bearerToken(request);
    return token === '' ? 'malformed' : token;
  };

  // RFC 7591 §3.1: 201 with the client information (§3.2.1). Each registration stays until someone
  // deletes it, so open registration has its own, slower limit: anyone could otherwise flood the
  // database with apps. With initial access tokens the operator chose who registers.
  const registering = ctx.config.registration.mode === 'open' ? { config: rateLimitConfig(ctx.config.rateLimits.registration, 'registration') } : limit;
  app.post('/oauth2/register', { schema: REGISTER, ...registering }, async (request, reply) => {
    requireRegistrationEnabled(ctx);
    await checkInitialAccessToken(ctx, tokenOf(request));
    const registered = await registerClient(ctx, request.body as ClientMetadataInput);
    return reply.headers(NO_STORE_HEADERS).code(201).send(registered);
  });

  // RFC 7592 §2.1.
  app.get('/oauth2/register/:client_id', { schema: REGISTERED_CLIENT_READ, ...limit }, async (request, reply) => {
    requireRegistrationEnabled(ctx);
    const { client_id: clientId } = request.params as { client_id: string };
    const client = await registeredClient(ctx, clientId, tokenOf(request));
    return reply.headers(NO_STORE_HEADERS).send(clientInformation(ctx, client));
  });

  // RFC 7592 §2.2: full replacement of the metadata.
  app.put('/oauth2/register/:client_id', { schema: REGISTERED_CLIENT_UPDATE, ...limit }, async (request, reply) => {
    requireRegistrationEnabled(ctx);
    const { client_id: clientId } = request.params as { client_id: string };
    const client = await registeredClient(ctx, clientId, tokenOf(request));
    return reply.headers(NO_STORE_HEADERS).send(await updateRegisteredClient(ctx, client, request.body as ClientMetadataInput));
  });

  // RFC 7592 §2.3: 204, as the RFC says.
  app.delete('/oauth2/register/:client_id', { schema: REGISTERED_CLIENT_DELETE, ...limit }, async (request, reply) => {
    requireRegistrationEnabled(ctx);
    const { client_id: clientId } = request.params as { client_id: string };
    await deleteRegisteredClient(ctx, await registeredClient(ctx, clientId, tokenOf(request)));
    return reply.code(204).send();
  });
}
