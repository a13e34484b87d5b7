/**
 * Errors on the Fitbit-compatible routes, in Fitbit's shape:
 * `{"errors": [{"errorType", "fieldName", "message"}], "success": false}`, with Fitbit's statuses
 * and error types. Everything else about errors holds as on `/v1/…`: no internals in an answer,
 * 503 with Retry-After while the database is away.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, RETRY_AFTER_SECONDS } from '../../errors.js';
import { bearerToken } from '../../http/bearer-token.js';

export type FitbitErrorType = 'expired_token' | 'invalid_token' | 'insufficient_scope' | 'insufficient_permissions' | 'validation' | 'not_found' | 'system';

export class FitbitError extends Error {
  constructor(
    readonly status: number,
    readonly errorType: FitbitErrorType,
    message: string,
    readonly fieldName = 'n/a',
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** A bad value of a path segment or form field: 400 `validation`, naming the field. */
export const validation = (fieldName: string, message: string) => new FitbitError(400, 'validation', message, fieldName);

export function fitbitBody(error: FitbitError) {
  return { errors: [{ errorType: error.errorType, fieldName: error.fieldName, message: error.message }], success: false };
}

/** Stride's error codes as Fitbit names them (its "Error handling" page). */
const TYPE_OF: Partial<Record<ApiError['error'], FitbitErrorType>> = {
  invalid_token: 'invalid_token',
  invalid_dpop_proof: 'invalid_token',
  use_dpop_nonce: 'invalid_token',
  insufficient_scope: 'insufficient_scope',
  not_found: 'not_found',
  invalid_request: 'validation',
  conflict: 'validation',
  request_too_large: 'validation',
  unsupported_media_type: 'validation',
};

export interface ErrorSense {
  /** True when the token was issued and has expired (Fitbit tells `expired_token` from `invalid_token`). */
  isExpired(token: string): Promise<boolean>;
  /** True for an error of a database that cannot be reached or written for now (a 503). */
  isDatabaseUnavailable(error: unknown): boolean;
}

/**
 * The Fitbit answer for anything a route threw. A token that is no longer valid because it expired
 * is `expired_token`, which Fitbit clients (python-fitbit) answer by refreshing.
 */
export async function fitbitErrorOf(error: unknown, request: FastifyRequest, sense: ErrorSense): Promise<FitbitError | null> {
  if (error instanceof FitbitError) return error;
  if (error instanceof ApiError) {
    if (error.error === 'invalid_token') {
      const token = bearerToken(request);
      const type = token && (await sense.isExpired(token)) ? 'expired_token' : 'invalid_token';
      const message = type === 'expired_token' ? `Access token expired: ${token!.slice(0, 8)}…` : error.description;
      return new FitbitError(401, type, message, 'n/a', error.headers);
    }
    if (error.error === 'temporarily_unavailable' || error.error === 'server_error') return new FitbitError(error.status, 'system', error.description, 'n/a', error.headers);
    if (error.error === 'rate_limited') return new FitbitError(429, 'system', error.description, 'n/a', error.headers);
    return new FitbitError(error.status, TYPE_OF[error.error] ?? 'validation', error.description, 'n/a', error.headers);
  }
  if (sense.isDatabaseUnavailable(error)) {
    return new FitbitError(503, 'system', 'the database cannot be reached for now; try again shortly', 'n/a', { 'retry-after': String(RETRY_AFTER_SECONDS) });
  }
  const status = (error as { statusCode?: number; validation?: unknown }).statusCode;
  if ((error as { validation?: unknown }).validation || (status !== undefined && status >= 400 && status < 500)) {
    return new FitbitError(status ?? 400, 'validation', (error as Error).message);
  }
  return null;
}

export function sendFitbitError(reply: FastifyReply, error: FitbitError): FastifyReply {
  reply.request.errorCode = error.errorType;
  return reply.code(error.status).headers(error.headers).send(fitbitBody(error));
}

/** The error handler of the Fitbit-compatible scope. */
export function fitbitErrorHandler(sense: ErrorSense) {
  return async (error: Error, request: FastifyRequest, reply: FastifyReply) => {
    const known = await fitbitErrorOf(error, request, sense).catch(() => null);
    if (known) return sendFitbitError(reply, known);
    request.log.error({ err: error }, 'request failed');
    return sendFitbitError(reply, new FitbitError(500, 'system', `the server failed to process the request; request id ${request.id}`));
  };
}

