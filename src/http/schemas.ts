/**
 * What the routes share in their schemas (docs/api.md, /openapi.json): the one error shape, the
 * error answers a route declares, and how a route names its credentials.
 *
 * Input schemas are validated on every request (http/validation.ts); response schemas are used to
 * write the answers.
 */
import { ERROR_STATUS } from '../errors.js';

/** `{"error", "error_description"}`, and the request id of a 500 (docs/api.md, "Errors"). */
export const ERROR_SCHEMA = {
  $id: 'Error',
  type: 'object',
  required: ['error', 'error_description'],
  properties: {
    error: { type: 'string', enum: Object.keys(ERROR_STATUS) },
    error_description: { type: 'string' },
    request_id: { type: 'string', description: 'on 500 server_error: the id to look for in the log' },
  },
} as const;

const ERROR_MEANING: Record<number, string> = {
  400: 'invalid_request, or an OAuth error of RFC 6749 §5.2',
  401: 'invalid_token (WWW-Authenticate: Bearer, RFC 6750 §3; DPoP, RFC 9449 §7.1), invalid_dpop_proof or use_dpop_nonce at the resource API, or invalid_client',
  403: 'insufficient_scope: the token lacks the scope this needs (WWW-Authenticate names it)',
  404: 'not_found',
  409: 'conflict: the sleep session overlaps a stored one',
  413: 'request_too_large: the body is over 1 MiB',
  415: 'unsupported_media_type',
  429: 'rate_limited, with Retry-After',
  500: 'server_error, with a request_id and no internals',
  503: 'temporarily_unavailable: the database cannot be reached for now, with Retry-After',
};

/** Every route can answer these: a failed backend, a database away, a rate limit. */
const ALWAYS = [429, 500, 503];

/** The error answers of a route, besides those every route has. */
export function errorAnswers(...statuses: number[]): Record<number, object> {
  return Object.fromEntries(
    [...new Set([...statuses, ...ALWAYS])].sort().map((status) => [status, { description: ERROR_MEANING[status], $ref: 'Error#' }]),
  );
}

/** The OpenAPI security requirement of each kind of caller (components.securitySchemes, http/openapi.ts). */
type SecurityRequirements = Array<Record<string, string[]>>;
/** A bearer token, or a DPoP-bound one with its proof (RFC 9449 §7). */
export const BEARER: SecurityRequirements = [{ bearer: [] }, { dpop: [] }];
/** HTTP Basic, or client_id (and client_secret) as form fields: the empty requirement. */
export const CLIENT: SecurityRequirements = [{ clientBasic: [] }, {}];
export const CLIENT_BASIC: SecurityRequirements = [{ clientBasic: [] }];

/** The property of a hook that demands a scope (api/bearer.ts), read back for /openapi.json. */
const REQUIRED_SCOPE = Symbol('requiredScope');

/** Marks `hook` as the one that demands `scope`, so the document names the scope the route enforces. */
export function demandsScope<T extends object>(hook: T, scope: string): T {
  return Object.assign(hook, { [REQUIRED_SCOPE]: scope });
}

/** The scope demanded by one of a route's onRequest hooks (demandsScope), if any. */
export function documentedScope(hooks: unknown): string | undefined {
  for (const hook of [hooks].flat()) {
    if (typeof hook === 'function' && REQUIRED_SCOPE in hook) return (hook as { [REQUIRED_SCOPE]: string })[REQUIRED_SCOPE];
  }
  return undefined;
}

/** A success answer's schema with the sentence the reference shows for it (OpenAPI requires one). */
export function answer<T extends object>(description: string, schema: T): T & { description: string } {
  return { ...schema, description };
}
