/**
 * The machine-facing routes of the authorization server (docs/oauth.md): RFC 8414 metadata and the
 * client endpoints — token, revoke, introspect. Protocol decisions live in the plain modules next
 * to this file; this one only speaks HTTP. The browser side of the authorization endpoint (sign-in,
 * consent) is a page: src/web/pages/authorize.ts.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { rateLimitConfig } from '../http/rate-limit.js';
import { refuseSchemaViolation } from '../http/validation.js';
import { useApiSecurityHeaders } from '../http/security-headers.js';
import { authenticateClient } from './client-auth.js';
import { NO_STORE_HEADERS } from './issue-tokens.js';
import { introspectToken } from './introspection.js';
import { authorizationServerMetadata } from './metadata.js';
import { revokeToken } from './revocation.js';
import { DEVICE_AUTHORIZATION, INTROSPECT, METADATA, PAR, REVOKE, TOKEN } from './schemas.js';
import { startDeviceAuthorization } from './device-authorization.js';
import { validateAuthorizationRequest } from './authorize.js';
import { pushAuthorizationRequest } from './pushed-requests.js';
import { exchange, formParameters, type ProofVerification } from './token.js';
import { currentNonce, proofHeader, verifyProof } from './dpop.js';

/** RFC 8414 §3. */
export async function metadataRoutes(app: FastifyInstance): Promise<void> {
  const config = app.ctx.config;
  app.get('/.well-known/oauth-authorization-server', { schema: METADATA }, async () => authorizationServerMetadata(config));
}

/**
 * RFC 6749 §3.2, RFC 7009 §2 and RFC 7662 §2: form-encoded requests from clients, JSON answers.
 * They answer programs, never browsers: the API's header set, and no cookies are read or set.
 */
export async function clientEndpointRoutes(app: FastifyInstance): Promise<void> {
  const ctx = app.ctx;
  useApiSecurityHeaders(app);

  /**
   * What every client endpoint does first, in this order: the body must be a form of single values
   * (RFC 6749 §3.2, 415 or invalid_request), the schema decides the parameters' types, then the
   * client is authenticated (RFC 6749 §2.3 and §3.2.1; RFC 7009 §2.1 and RFC 7662 §2.1 check the
   * client before the token; RFC 8628 §3.1 and RFC 9126 §2.1 as at the token endpoint), so an
   * unknown client hears invalid_client whatever else is wrong with its request. Every route here
   * has `attachValidation`, for the schema to speak after the form check. The client is kept on
   * the request: its usage is counted for it once it has proven itself (http/usage.ts).
   */
  const clientRequest = async (request: FastifyRequest) => {
    const body = formParameters(request);
    refuseSchemaViolation(request);
    const client = await authenticateClient(ctx.stores.apps, body, request.headers.authorization);
    request.authenticatedClient = client;
    return { body, client };
  };

  // RFC 9449 §8: with DPOP_NONCE=true every proof carries a nonce the server handed out.
  const nonceKey = ctx.config.dpopNonce ? ctx.stores.serverSecret('dpop_nonce', ctx.clock) : undefined;
  const tokenUrl = `${ctx.config.publicUrl}/oauth2/token`;
  /** The token request's DPoP proof (RFC 9449 §5), verified after the client is authenticated. */
  const proofOf =
    (request: FastifyRequest): ProofVerification =>
    async () => {
      const proof = proofHeader(request.headers, { status: 400 });
      if (proof === undefined) return undefined;
      return verifyProof(ctx, proof, { method: 'POST', url: tokenUrl, status: 400, nonceKey: nonceKey && (await nonceKey()) });
    };

  app.post('/oauth2/token', { schema: TOKEN, attachValidation: true, config: rateLimitConfig(ctx.config.rateLimits.token, 'token') }, async (request, reply) => {
    const { body, client } = await clientRequest(request);
    const response = await exchange(ctx, body, client, proofOf(request));
    if (nonceKey) reply.header('dpop-nonce', currentNonce(await nonceKey(), ctx.clock()));
    return reply.headers(NO_STORE_HEADERS).send(response);
  });

  // RFC 8628 §3.1: client authentication as at the token endpoint; the schema types the fields. For
  // devices, not browsers (a browser has the authorization endpoint): no page elsewhere reads it.
  app.post('/oauth2/device_authorization', { schema: DEVICE_AUTHORIZATION, attachValidation: true, config: { ...rateLimitConfig(ctx.config.rateLimits.token, 'token'), crossOrigin: false } }, async (request, reply) => {
    const { body, client } = await clientRequest(request);
    const response = await startDeviceAuthorization(ctx, client, body);
    return reply.headers(NO_STORE_HEADERS).send(response);
  });

  // RFC 7009 §2.
  app.post('/oauth2/revoke', { schema: REVOKE, attachValidation: true, config: rateLimitConfig(ctx.config.rateLimits.token, 'token') }, async (request, reply) => {
    const { body, client } = await clientRequest(request);
    await revokeToken(ctx, client, body);
    return reply.headers(NO_STORE_HEADERS).code(200).send();
  });

  // RFC 7662 §2. For the servers that accept Stride's tokens, so no browser app may read its answers.
  app.post('/oauth2/introspect', { schema: INTROSPECT, attachValidation: true, config: { ...rateLimitConfig(ctx.config.rateLimits.token, 'token'), crossOrigin: false } }, async (request, reply) => {
    const { body, client } = await clientRequest(request);
    return reply.headers(NO_STORE_HEADERS).send(await introspectToken(ctx, client, body));
  });

  // RFC 9126 §2: the schema decides the parameters' types; the authorization request is checked as
  // the authorization endpoint checks it. 201, as the RFC says. A client pushes from its server or
  // native app, a direct request (RFC 9126 §1): no page elsewhere reads the answer.
  app.post('/oauth2/par', { schema: PAR, attachValidation: true, config: { ...rateLimitConfig(ctx.config.rateLimits.token, 'token'), crossOrigin: false } }, async (request, reply) => {
    const { body, client } = await clientRequest(request);
    const response = await pushAuthorizationRequest(ctx, client, body, async (params) => {
      const check = await validateAuthorizationRequest(ctx, params, [], 'pushing');
      if (check.ok) return null;
      return check.page !== undefined ? { error: 'invalid_request', description: check.page } : { error: check.error, description: check.description };
    });
    return reply.headers(NO_STORE_HEADERS).code(201).send(response);
  });
}
