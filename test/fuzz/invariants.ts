/**
 * What every answer must satisfy, whatever was sent: a status from the error table of the product
 * contract (the route's own, or one that parsing, limits or a database outage add), the one JSON
 * error shape, the security headers, no redirect to anywhere unregistered, no cookies from the API,
 * and nothing internal — stack frames, file paths, SQL, framework or Node error codes — in a body
 * or header unless the client sent that text itself.
 */
import { ERROR_STATUS, SECOND_STATUS } from '../../src/errors.js';
import type { Materialized, RequestSpec } from './requests.js';

/** Every status Stride may answer; 500 is not among them (a database outage is 503). */
export const PRODUCT_STATUSES = [200, 201, 204, 302, 303, 400, 401, 403, 404, 409, 413, 415, 429, 503];

/** What the request may be answered with. */
export function allowedStatuses(spec: RequestSpec): Set<number> {
  const allowed = new Set<number>([503]);
  const add = (...statuses: number[]) => statuses.forEach((status) => allowed.add(status));
  const route = spec.route;
  for (const served of spec.servedBy) add(...served.statuses);
  if (spec.pathMangled && route) add(...route.statuses);
  if (spec.servedBy.length === 0 || spec.pathMangled) add(404);
  if (spec.servedBy.some((served) => served.rateLimited) || (spec.pathMangled && route?.rateLimited)) add(429);
  const parsesBody = spec.method !== 'GET' && spec.method !== 'HEAD';
  const headerNames = new Set(spec.headers.map(([name]) => name));
  // A body that is malformed (400), too large (413) or of an unsupported type or encoding (415);
  // a route that reads a body also refuses a missing one.
  if (spec.body && parsesBody) add(400, 413, 415);
  const readers = spec.pathMangled && route ? [...spec.servedBy, route] : spec.servedBy;
  if (readers.some((reader) => reader.method !== 'GET') && parsesBody) add(400, 415);
  if (headerNames.has('content-length') && parsesBody) add(400, 413);
  // A path the router cannot take apart (a malformed escape, a parameter over 100 characters) is
  // refused before any route; which of these two it gets is not the route's to say.
  if (!decodes(spec.path) || spec.path.split('/').some((segment) => segment.length > 100)) add(400, 404);
  // A signed-in page sends HEAD, like any method but GET, to sign in with a 303 (also a fine answer).
  if (spec.method === 'HEAD' && allowed.has(302)) add(303);
  return allowed;
}

function decodes(path: string): boolean {
  try {
    decodeURIComponent(path);
    return true;
  } catch {
    return false;
  }
}

/** Internals that must never reach a client: stack frames, paths, SQL and its errors, error codes. */
const LEAKS: RegExp[] = [
  /FST_[A-Z0-9_]+/,
  /SQLITE[A-Z_]*/,
  /\bERR_[A-Z0-9_]{3,}/,
  /node_modules/,
  /\bat (?:async )?(?:Object\.|new |[\w$.<>[\]]+ \()/,
  /(?:file:\/\/|\/(?:work|home|tmp|usr|opt|srv|app)\/)[\w.@+-]+\//,
  /\b[\w-]+\.(?:ts|js|cjs|mjs):\d+/,
  /\bdist\/(?:src|test)\//,
  /\b(?:TypeError|ReferenceError|RangeError|SyntaxError|AssertionError|DatabaseError)\b/,
  /Cannot read propert|is not a function|is not iterable|Maximum call stack/,
  /syntax error at or near|violates [a-z -]*constraint|duplicate key value|constraint failed|no such (?:table|column)/i,
  /relation "[^"]*" does not exist|invalid input syntax for|invalid byte sequence|unterminated quoted/i,
  /\b(?:kysely|better-sqlite3|pg-protocol|sqlite3?_)\b/i,
  /\b(?:select\s+[\w*",. ]+\s+from\s+"?\w|insert\s+into\s+"?\w|delete\s+from\s+"?\w|update\s+"?\w+"?\s+set\s)/i,
];

export interface Answer {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

const header = (answer: Answer, name: string): string | undefined => {
  const value = answer.headers[name];
  return value === undefined ? undefined : Array.isArray(value) ? value.join(', ') : String(value);
};

/**
 * A browser asking for a page outside the API and the client endpoints gets its errors as a page
 * (docs/web.md, "Errors in the browser").
 */
function asksForPage(request: Materialized): boolean {
  const accept = Object.entries(request.options.headers).find(([name]) => name.toLowerCase() === 'accept')?.[1] ?? '';
  const html = accept.split(',').some((range) => range.split(';')[0]!.trim().toLowerCase() === 'text/html');
  return html && !/^\/(v1(\/|$)|oauth2\/(token|revoke|introspect)\/?$)/.test(request.options.url.split('?')[0]!);
}

/** Problems with `answer` to `spec`; empty when it holds every invariant. */
export async function problemsWith(
  spec: RequestSpec,
  request: Materialized,
  answer: Answer,
  registeredRedirectUris: () => Promise<string[]>,
): Promise<string[]> {
  const problems: string[] = [];
  const status = answer.statusCode;
  const face = spec.route?.face ?? 'api';
  const contentType = header(answer, 'content-type') ?? '';
  const isJson = contentType.startsWith('application/json');
  const isHtml = contentType.startsWith('text/html');
  const hasBody = spec.method !== 'HEAD' && answer.body !== '';

  if (!PRODUCT_STATUSES.includes(status)) problems.push(`status ${status} is not one the product answers`);
  else if (!allowedStatuses(spec).has(status)) problems.push(`status ${status} is not one this route answers (${[...allowedStatuses(spec)].join(', ')})`);

  if (status >= 400 && hasBody) {
    if (isJson) {
      problems.push(...errorBodyProblems(answer.body, status));
    } else if (!(isHtml && (face === 'page' || asksForPage(request)))) {
      problems.push(`a ${status} answer is ${contentType || 'untyped'}, not the JSON error body`);
    }
  }
  if (face === 'api' && hasBody && status < 300 && !isJson) problems.push(`an API answer is ${contentType || 'untyped'}, not JSON`);
  if (isJson && hasBody) {
    try {
      JSON.parse(answer.body);
    } catch {
      problems.push('a JSON answer does not parse');
    }
  }

  if (header(answer, 'x-content-type-options') !== 'nosniff') problems.push('no X-Content-Type-Options: nosniff');
  if (!header(answer, 'content-security-policy')) problems.push('no Content-Security-Policy');
  if (!header(answer, 'x-request-id')) problems.push('no X-Request-Id');
  if (isHtml && !/frame-ancestors 'none'/.test(header(answer, 'content-security-policy') ?? '')) problems.push('an HTML page that can be framed');
  if (face === 'api' && spec.route !== null && header(answer, 'set-cookie') !== undefined) problems.push('an API answer sets a cookie');

  if (status === 302 || status === 303) {
    const location = header(answer, 'location');
    if (!location) problems.push(`a ${status} without Location`);
    else if (!isLocalPath(location)) {
      // A loopback redirect URI may come back on another port (RFC 8252 §7.3): still no open redirect.
      const target = withoutLoopbackPort(location);
      const registered = (await registeredRedirectUris()).map(withoutLoopbackPort);
      if (!registered.some((uri) => target === uri || target.startsWith(uri.includes('?') ? `${uri}&` : `${uri}?`))) {
        problems.push(`a redirect to ${location.slice(0, 200)}, neither a local path nor a registered redirect URI`);
      }
    }
  }

  const headerText = Object.entries(answer.headers).map(([name, value]) => `${name}: ${String(value)}`).join('\n');
  for (const [where, text] of [['body', answer.body], ['headers', headerText]] as const) {
    for (const pattern of LEAKS) {
      const leaked = pattern.exec(text)?.[0];
      if (leaked !== undefined && !request.sent.some((text) => text.includes(leaked))) problems.push(`the ${where} shows "${leaked}"`);
    }
  }
  return problems;
}

function errorBodyProblems(body: string, status: number): string[] {
  let error: unknown;
  try {
    error = JSON.parse(body);
  } catch {
    return ['a JSON error body does not parse'];
  }
  if (!error || typeof error !== 'object' || Array.isArray(error)) return ['a JSON error body is not an object'];
  const { error: code, error_description: description, ...rest } = error as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof code !== 'string' || typeof description !== 'string') problems.push('a JSON error body without string error and error_description');
  if (Object.keys(rest).length > 0) problems.push(`a JSON error body with extra fields ${Object.keys(rest).join(', ')}`);
  const expected = status === 503 ? 'temporarily_unavailable' : undefined;
  if (typeof code === 'string') {
    const allowed = [(ERROR_STATUS as Record<string, number>)[code], (SECOND_STATUS as Record<string, number | undefined>)[code]];
    if (expected !== undefined ? code !== expected : !allowed.includes(status)) {
      problems.push(`error "${code}" with status ${status}`);
    }
  }
  return problems;
}

/** A path on this server: "/…" but never "//host" or "/\host", which browsers read as another origin. */
function isLocalPath(location: string): boolean {
  return location.startsWith('/') && !location.startsWith('//') && !location.startsWith('/\\') && !/[\u0000-\u001f]/.test(location);
}

function withoutLoopbackPort(uri: string): string {
  return uri.replace(/^(http:\/\/(?:127\.0\.0\.1|\[::1\]))(?::\d+)?/, '$1');
}
