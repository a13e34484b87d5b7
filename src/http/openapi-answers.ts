/**
 * Finishes the document @fastify/swagger collects from the routes: the paths described by hand are
 * added, and every error answer gets an example of each `error` code the operation really answers
 * with that status — `invalid_token` for a bad access token, `invalid_client` for a bad client
 * secret, `insufficient_scope`, `rate_limited`, … (errors.ts) — so a reader, or a client generator,
 * sees the code a program should test for.
 */
import { ERROR_STATUS, SECOND_STATUS, type ErrorCode } from '../errors.js';

interface MediaType {
  schema?: object;
  examples?: Record<string, { summary: string; value: object }>;
}
interface Response {
  description: string;
  content?: Record<string, MediaType>;
}
interface Operation {
  security?: Array<Record<string, string[]>>;
  responses: Record<string, Response>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
}

/** What each code means, as the `error_description` of its example. */
const EXAMPLE_DESCRIPTIONS: Record<ErrorCode, string> = {
  invalid_request: 'start_date must be a date YYYY-MM-DD',
  invalid_grant: 'the authorization code is invalid, expired or already used',
  unsupported_grant_type: 'grant_type password is not supported',
  unsupported_response_type: 'response_type must be code',
  unsupported_token_type: 'token_type_hint names a kind of token Stride does not issue',
  invalid_scope: 'unknown scope read_minds',
  unauthorized_client: 'this app may not use this grant',
  access_denied: 'the person declined',
  authorization_pending: 'the person has not answered yet',
  slow_down: 'polled faster than the interval; the interval is now 5 seconds longer',
  expired_token: 'the device code has expired',
  invalid_dpop_proof: 'the DPoP proof is missing, malformed or not for this request',
  use_dpop_nonce: 'the DPoP proof must carry the nonce of the DPoP-Nonce header',
  invalid_client: 'client authentication failed',
  invalid_redirect_uri: 'redirect URI "http://example.com/cb" must use https (http is allowed only for localhost)',
  invalid_client_metadata: 'scope: unknown scope read_minds',
  invalid_token: 'the access token is invalid, expired or revoked',
  insufficient_scope: 'this needs the write_activity scope',
  not_found: 'no such sleep session',
  conflict: 'the sleep session overlaps a stored one',
  request_too_large: 'the request body is larger than 1048576 bytes',
  unsupported_media_type: 'the Content-Type of the body is not supported here',
  rate_limited: 'too many requests; retry after 12 seconds',
  server_error: 'the server failed to process the request; request id 3f1c…',
  temporarily_unavailable: 'the database cannot be reached or written for now; try again shortly',
};

/** What an error answer of a status carries besides its code (RFC 6750 §3, RFC 9110 §10.2.3). */
const STATUS_NOTES: Record<number, string> = {
  401: ', with a WWW-Authenticate challenge',
  403: ', with a WWW-Authenticate challenge naming the scope needed',
  413: ': the body is over the route\'s limit (1 MiB, more for heart rate)',
  429: ', with Retry-After',
  500: ', with the request_id to look for in the log',
  503: ': the database cannot be reached for now; with Retry-After',
};

function noteOf(status: number, codes: ErrorCode[]): string {
  if (status === 401 && codes.includes('invalid_client')) return ', with WWW-Authenticate: Basic when HTTP Basic was tried (RFC 6749 §5.2)';
  if (status === 400 && codes.length === 1) return ': error_description names the field and the rule it breaks; nothing was changed';
  return STATUS_NOTES[status] ?? '';
}

/** The 400 codes of the authorization server's endpoints (RFC 6749 §5.2, RFC 8628 §3.5, RFC 9449, RFC 7591 §3.2.2). */
const OAUTH_400: Record<string, ErrorCode[]> = {
  'post /oauth2/token': ['invalid_request', 'invalid_grant', 'unsupported_grant_type', 'invalid_scope', 'unauthorized_client', 'authorization_pending', 'slow_down', 'expired_token', 'access_denied', 'invalid_dpop_proof', 'use_dpop_nonce'],
  'post /oauth2/device_authorization': ['invalid_request', 'invalid_scope', 'unauthorized_client'],
  'post /oauth2/par': ['invalid_request', 'invalid_scope', 'unauthorized_client', 'unsupported_response_type'],
  'post /oauth2/revoke': ['invalid_request', 'unsupported_token_type'],
  'post /oauth2/register': ['invalid_redirect_uri', 'invalid_client_metadata', 'invalid_request'],
  'put /oauth2/register/{client_id}': ['invalid_redirect_uri', 'invalid_client_metadata', 'invalid_request'],
};

/** The codes of an operation's answers with `status`, judged by its path and how its caller authenticates. */
export function errorCodes(method: string, path: string, operation: Operation, status: number): ErrorCode[] {
  const schemes = new Set((operation.security ?? []).flatMap((requirement) => Object.keys(requirement)));
  const resourceApi = /^\/(v1\/users|users)/.test(path);
  switch (status) {
    case 400:
      return OAUTH_400[`${method} ${path}`] ?? ['invalid_request'];
    case 401:
      if (schemes.has('clientBasic')) return ['invalid_client'];
      // RFC 9449 §7.1: a DPoP proof refused at the resource API is a 401.
      return resourceApi ? ['invalid_token', 'invalid_dpop_proof', 'use_dpop_nonce'] : ['invalid_token'];
    default:
      return (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((code) => ERROR_STATUS[code] === status);
  }
}

/** The status `code` is answered with, at `status` if it has a second one (errors.ts, SECOND_STATUS). */
export function statusOf(code: ErrorCode, status: number): boolean {
  return ERROR_STATUS[code] === status || SECOND_STATUS[code] === status;
}

function example(code: ErrorCode): { summary: string; value: object } {
  const value = { error: code, error_description: EXAMPLE_DESCRIPTIONS[code], ...(code === 'server_error' && { request_id: '3f1c2a9e-…' }) };
  return { summary: code, value };
}

/** The Fitbit-compatible face (api/fitbit/): errors in Fitbit's shape, by `errorType`. */
const FITBIT_PATH = /^\/1(\.2)?\/user\//;

const FITBIT_ERROR_TYPES: Record<number, string[]> = {
  400: ['validation'],
  401: ['expired_token', 'invalid_token'],
  403: ['insufficient_scope', 'insufficient_permissions'],
  404: ['not_found'],
  409: ['validation'],
  415: ['validation'],
};

function fitbitExample(errorType: string): { summary: string; value: object } {
  return { summary: errorType, value: { errors: [{ errorType, fieldName: errorType === 'validation' ? 'date' : 'n/a', message: `an error of type ${errorType}` }], success: false } };
}

/** Adds `extraPaths` and the error examples; the document is changed in place and returned. */
export function finishDocument<T extends OpenApiDocument>(document: T, extraPaths: Readonly<Record<string, object>>): T {
  Object.assign(document.paths, extraPaths);
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const json = response.content?.['application/json'];
        if (Number(status) < 400 || json === undefined) continue;
        if (FITBIT_PATH.test(path)) {
          json.examples = Object.fromEntries((FITBIT_ERROR_TYPES[Number(status)] ?? ['system']).map((type) => [type, fitbitExample(type)]));
          continue;
        }
        const codes = errorCodes(method, path, operation, Number(status));
        json.examples = Object.fromEntries(codes.map((code) => [code, example(code)]));
        response.description = `${codes.map((code) => `\`${code}\``).join(' or ')}${noteOf(Number(status), codes)}`;
      }
    }
  }
  return document;
}
