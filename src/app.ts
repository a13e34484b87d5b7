/**
 * Builds the Fastify application: shared plumbing (request ids, body parsing and limits, the one
 * error shape of README "HTTP conventions") and the route plugins of each face of Stride.
 */
import { randomUUID } from 'node:crypto';
import cookie from '@fastify/cookie';
import formBody from '@fastify/formbody';
import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { AppContext } from './context.js';
import { eventRoutes } from './api/events.js';
import { resourceRoutes } from './api/routes.js';
import { fitbitRoutes } from './api/fitbit/routes.js';
import { isDatabaseUnavailable } from './db/unavailable.js';
import { ApiError, temporarilyUnavailable } from './errors.js';
import { clientErrorHandler } from './http/client-errors.js';
import { allowCrossOriginCalls } from './http/cross-origin.js';
import { healthRoutes } from './http/health.js';
import { handleRouterError } from './http/router-errors.js';
import { serializeRequest } from './http/log-redaction.js';
import { registerRateLimiting } from './http/rate-limit.js';
import { metricsRoute, observeRequests } from './http/metrics.js';
import { openApiDocumentRoute, registerOpenApi } from './http/openapi.js';
import { installSchemaValidation } from './http/validation.js';
import { countUsage, type UsageCounter } from './http/usage.js';
import { lazyChildLogger } from './http/request-logger.js';
import { registerSecurityHeaders } from './http/security-headers.js';
import { createMetrics } from './metrics.js';
import { SCOPES } from './domain/scopes.js';
import { AUTHORIZATION_ENDPOINT_PATH_ITEM } from './oauth/authorize-document.js';
import { clientEndpointRoutes, metadataRoutes } from './oauth/routes.js';
import { registrationRoutes } from './oauth/registration-routes.js';
import { observeStoreCalls } from './store/observed.js';
import { sendErrorAsPage, sendNotFoundPage, wantsPage } from './web/error-pages.js';
import { sendErrorPage } from './web/views.js';
import { webRoutes } from './web/routes.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Each app's usage, counted in memory and flushed by the server (server.ts). */
    usage: UsageCounter;
  }
}

/** Bodies above this size are refused with 413 (a full week of minute samples is ~400 KB). */
export const BODY_LIMIT_BYTES = 1024 * 1024;

/** What buildApp is given: the context but its metrics, which each application makes for itself. */
export type AppParts = Omit<AppContext, 'metrics'>;

export async function buildApp(parts: AppParts): Promise<FastifyInstance> {
  const metrics = createMetrics(parts.stores.connections);
  // Requests and store calls are timed only when someone can read the figures (METRICS_TOKEN or
  // METRICS_PORT): the timing is the one cost of metrics on the hot paths.
  const { token, port } = parts.config.metrics;
  const timed = token !== undefined || port !== undefined;
  const ctx: AppContext = { ...parts, stores: timed ? observeStoreCalls(parts.stores, metrics.storeCalls) : parts.stores, metrics };
  const limits = ctx.config.http;
  const app = Fastify({
    logger: {
      level: ctx.config.logLevel,
      serializers: { req: serializeRequest },
    },
    genReqId: () => randomUUID(),
    childLoggerFactory: lazyChildLogger,
    // One access-log line per request (below) instead of Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT_BYTES,
    // Both `/oauth2/token` and `/oauth2/token/` are served (docs/oauth.md, Endpoints).
    routerOptions: { ignoreTrailingSlash: true },
    // request.ip (and so every per-address rate limit) comes from X-Forwarded-For only when the
    // peer is a proxy the operator trusts (TRUST_PROXY, README).
    trustProxy: ctx.config.trustProxy,
    // Slow clients cannot hold connections (README, REQUEST_TIMEOUT): Fastify's defaults turn
    // Node's request timeout off, so a body trickling one byte at a time would stay open forever.
    requestTimeout: limits.requestTimeoutMs,
    connectionTimeout: limits.connectionTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Unlimited requests per keep-alive connection: each request is bounded and rate-limited anyway.
    maxRequestsPerSocket: 0,
    http: {
      requestTimeout: limits.requestTimeoutMs,
      headersTimeout: limits.headersTimeoutMs,
      // Node checks the two timeouts above at this interval (30 s by default, which would let a
      // connection outlive a short timeout by that much).
      connectionsCheckingInterval: Math.min(1000, limits.headersTimeoutMs / 2),
    },
    clientErrorHandler: clientErrorHandler(limits.requestTimeoutMs),
    frameworkErrors: handleRouterError,
  });
  // Connections beyond the cap are closed as soon as they are accepted, so the process keeps file
  // descriptors for its database, and answers again once the excess is gone.
  app.server.maxConnections = limits.maxConnections;
  app.decorate('ctx', ctx);
  app.decorate('serverSecrets', {
    preSessionCsrf: ctx.stores.serverSecret('pre_session_csrf', ctx.clock),
  });

  if (['info', 'debug', 'trace'].includes(ctx.config.logLevel)) {
    app.addHook('onResponse', (request, reply, done) => {
      request.log.info({ req: request, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 }, 'request completed');
      done();
    });
  }

  if (timed) observeRequests(app, metrics);
  app.decorate('usage', countUsage(app));
  await app.register(formBody, { bodyLimit: BODY_LIMIT_BYTES });
  registerSecurityHeaders(app);
  // Every answer names its request id and carries the security headers of its route's scope.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id).headers(request.server.securityHeaders);
    done();
  });
  await registerRateLimiting(app);

  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) => {
    const error = new ApiError('not_found', `no endpoint ${request.method} ${request.url.split('?')[0]}`);
    return wantsPage(request) ? sendNotFoundPage(reply, request, error) : sendError(reply, error);
  });

  installSchemaValidation(app);
  await registerOpenApi(app, { scopes: SCOPES, extraPaths: { '/oauth2/authorize': AUTHORIZATION_ENDPOINT_PATH_ITEM } });
  await app.register(healthRoutes);
  if (ctx.config.metrics.token !== undefined) metricsRoute(app, metrics.registry, ctx.config.metrics.token);
  // What an app running in a browser calls with fetch from its own origin: the metadata, the token and
  // revocation endpoints and the resource API (http/cross-origin.ts), and the OpenAPI document.
  await app.register(async (crossOrigin) => {
    allowCrossOriginCalls(crossOrigin);
    await crossOrigin.register(openApiDocumentRoute);
    await crossOrigin.register(metadataRoutes);
    // Each app's use is counted where it happens: the resource API and the client endpoints.
    await crossOrigin.register(async (api) => {
      api.addHook('onResponse', app.usage.countApiAnswer);
      await api.register(resourceRoutes);
      await api.register(fitbitRoutes, { isDatabaseUnavailable });
    });
    await crossOrigin.register(async (clientEndpoints) => {
      clientEndpoints.addHook('onResponse', app.usage.countClientAnswer);
      await clientEndpoints.register(clientEndpointRoutes);
    });
  });
  // Registration, like the event feed and the webhook API, is for servers and native apps: a page
  // elsewhere could register apps from its visitors' browsers, at their addresses, and read the
  // secrets back.
  await app.register(registrationRoutes);
  await app.register(eventRoutes);
  // Only the pages, the authorization endpoint among them, read or set cookies (the session, the
  // pre-sign-in CSRF token): the cookie plugin's hooks stay off the API and the client endpoints.
  await app.register(async (browserFacing) => {
    await browserFacing.register(cookie);
    await browserFacing.register(webRoutes);
  });
  return app;
}

export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  reply.request.errorCode = error.error;
  return reply.code(error.status).headers(error.headers).send(error.toJSON());
}

/**
 * Turns anything thrown by a route into the JSON error shape; 5xx details stay in the log. A browser
 * asking for a page gets the error as an HTML page (web/error-pages.ts), and so does a 5xx of a page
 * (a route of the browser-facing scope, where the cookie plugin parsed the request's cookies).
 */
export function handleError(error: FastifyError | ApiError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const apiError = toApiError(error, request.routeOptions.bodyLimit ?? BODY_LIMIT_BYTES);
  const isPage = request.cookies !== undefined;
  if (apiError?.error === 'temporarily_unavailable' && !(error instanceof ApiError)) {
    request.log.warn({ err: error }, 'the database is unavailable');
    if (isPage) return sendErrorAsPage(reply, request, apiError);
  }
  if (apiError && !wantsPage(request)) return sendError(reply, apiError);
  if (apiError) {
    request.errorCode = apiError.error;
    return sendErrorAsPage(reply, request, apiError);
  }
  request.log.error({ err: error }, 'request failed');
  if (isPage || wantsPage(request)) return sendErrorPage(reply, 500, 'Something went wrong', `The server failed to process the request (request id ${request.id}).`);
  return reply.code(500).send({
    error: 'server_error',
    error_description: `the server failed to process the request; request id ${request.id}`,
    request_id: request.id,
  });
}

/** `bodyLimit`: the route's (a heart-rate upload may carry a day of readings once a second). */
function toApiError(error: FastifyError | ApiError | Error, bodyLimit: number): ApiError | null {
  if (error instanceof ApiError) return error;
  if (isDatabaseUnavailable(error)) return temporarilyUnavailable('the database cannot be reached or written for now; try again shortly');
  const fastifyError = error as FastifyError;
  // Worded by the route's schemaErrorFormatter (http/validation.ts), the part of the request included.
  if (fastifyError.validation) return new ApiError('invalid_request', fastifyError.message);
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError('request_too_large', `the request body is larger than ${bodyLimit} bytes`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError('unsupported_media_type', 'the Content-Type of the body is not supported here');
    default:
      break;
  }
  const status = fastifyError.statusCode;
  if (status === 429) return new ApiError('rate_limited', error.message || 'too many requests');
  // Malformed JSON, empty body with a JSON content type, bad Content-Length, …
  if (status !== undefined && status >= 400 && status < 500) return new ApiError('invalid_request', error.message);
  return null;
}
