/**
 * What every Fitbit-compatible route declares for the OpenAPI document: its tag, its security,
 * its success answer and its errors in Fitbit's shape (errors.ts). The success schemas describe the
 * keys Fitbit clients read and let the others through: the answers are Fitbit's shapes, which
 * carry keys named by the resource (`activities-steps`).
 */
import type { RouteShorthandOptions } from 'fastify';
import { BEARER } from '../../http/schemas.js';

export const FITBIT_TAG = 'Fitbit compatible';

/** `{"errors": [{"errorType", "fieldName", "message"}], "success": false}`. */
const FITBIT_ERROR = {
  type: 'object',
  required: ['errors', 'success'],
  additionalProperties: false,
  properties: {
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['errorType', 'fieldName', 'message'],
        additionalProperties: false,
        properties: { errorType: { type: 'string' }, fieldName: { type: 'string' }, message: { type: 'string' } },
      },
    },
    success: { type: 'boolean' },
  },
} as const;

const ERROR_MEANING: Record<number, string> = {
  400: 'validation: a bad date, period, range, detail level or form field (fieldName names it)',
  401: 'expired_token or invalid_token',
  403: 'insufficient_scope, or insufficient_permissions for another person\'s id',
  404: 'not_found',
  409: 'validation: the sleep overlaps one already logged, or the subscription id or collection is the app\'s already (fieldName subscription-id)',
  415: 'validation: the body is not a form',
  429: 'system: the hour\'s requests are spent; Retry-After and Fitbit-Rate-Limit-Reset say when they start again',
  500: 'system',
  503: 'system: the database cannot be reached for now; Retry-After',
};

/** Every route of the face can answer these. */
const ALWAYS = [401, 403, 429, 500, 503];

/** An object answer: the keys described, any other let through. */
export function described(description: string, properties: Record<string, object> = {}): object {
  return { description, type: 'object', additionalProperties: true, properties };
}

/** A daily series under its resource's key (`activities-steps`, `body-weight`): `[{"dateTime", "value"}]`. */
export function daySeries(description: string): object {
  return { description, type: 'object', additionalProperties: { type: 'array', items: { type: 'object', additionalProperties: true, properties: { dateTime: { type: 'string' }, value: {} } } } };
}

/** The answer of a delete: no body. */
export const DELETED = { 204: { description: 'Deleted; no body', type: 'null' } };

/** A route of the face: its summary under the Fitbit tag, its success answers and the errors it may give besides ALWAYS. */
export function fitbitRoute(summary: string, success: Record<number, object>, errors: number[] = [400, 404]): RouteShorthandOptions {
  const errorAnswers = Object.fromEntries([...new Set([...errors, ...ALWAYS])].sort().map((status) => [status, { description: ERROR_MEANING[status], ...FITBIT_ERROR }]));
  return { schema: { tags: [FITBIT_TAG], summary, security: BEARER, response: { ...success, ...errorAnswers } } };
}
