/**
 * The answers to requests the router refuses before any route or hook runs: a path parameter
 * longer than the router's limit (Fastify answers 414 in its own body by default) and a path whose
 * percent-encoding is not UTF-8 (400 likewise). Both echo the path and skip the hooks that set
 * the security headers. Here they get the one error shape and the headers every answer carries,
 * and the path is not repeated back.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors.js';

export function routerError(error: FastifyError): ApiError {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    // No client id, app id or other path value is that long: nothing can be found under it.
    return new ApiError('not_found', 'no endpoint matches this path: one of its segments is too long');
  }
  return new ApiError('invalid_request', 'the path is not a valid URL (bad percent-encoding)');
}

/** Fastify's `frameworkErrors` option. */
export function handleRouterError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const apiError = routerError(error);
  return reply
    .code(apiError.status)
    .header('x-request-id', request.id)
    .headers(request.server.securityHeaders)
    .send(apiError.toJSON());
}
