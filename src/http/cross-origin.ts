/**
 * Cross-origin calls from browser apps (docs/oauth.md, "Apps that run in the browser"): a
 * single-page app on its own origin discovers the metadata, exchanges its code, refreshes and
 * revokes at the client endpoints, and calls the resource API with fetch. The Fetch standard's
 * CORS protocol lets it read those answers.
 *
 * Every origin is allowed (`*`) and credentials never are: these routes authenticate with a bearer
 * token, a client secret or a PKCE verifier that the caller must already hold, never with a cookie,
 * so a page on another origin gains nothing it could not do from a server. Without
 * `Access-Control-Allow-Credentials` a browser sends no cookie cross-origin and refuses to read a
 * credentialed answer, so the pages and their session stay out of reach.
 *
 * What a page elsewhere would gain is its visitor's address and numbers: registration (open to
 * anyone, limited per address) would let it register apps from every visitor's browser and read
 * their secrets back. So the endpoints for servers and devices — registration, pushed requests,
 * device authorization, introspection — are no part of this scope or opt out of it.
 */
import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `false` keeps a route of a cross-origin scope same-origin only. */
    crossOrigin?: false;
  }
}

/**
 * Headers a browser app may read besides the CORS-safelisted ones (RFC 6750 §3, RFC 9110 §10.2.3,
 * and the nonce a DPoP proof must carry next, RFC 9449 §8).
 */
const EXPOSED_HEADERS = ['www-authenticate', 'retry-after', 'dpop-nonce', 'x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

/** The same on every answer, whatever the request's Origin, so caches need no `Vary: Origin`. */
const ANSWER_HEADERS = Object.freeze({
  'access-control-allow-origin': '*',
  'access-control-expose-headers': EXPOSED_HEADERS.join(', '),
});

const PREFLIGHT_HEADERS = Object.freeze({
  ...ANSWER_HEADERS,
  'access-control-allow-methods': 'GET, POST, PUT, DELETE',
  // DPoP: a browser app proves its key on every call (RFC 9449 §4.1).
  'access-control-allow-headers': 'authorization, content-type, dpop',
  // Chromium keeps a preflight's answer for at most 2 hours, Firefox for 24.
  'access-control-max-age': '7200',
});

/**
 * Lets the routes of `scope` be called from any origin, but those registered with
 * `config: { crossOrigin: false }`. A preflight is answered for their paths only; any other
 * `OPTIONS` request stays unknown (404), as it is without CORS.
 */
export function allowCrossOriginCalls(scope: FastifyInstance): void {
  const crossOriginPaths = new Set<string>();
  // Routes with a parameter (`/v1/users/me/sleep/:id`), by their segments: a preflight names an id.
  const crossOriginTemplates: string[][] = [];
  scope.addHook('onRoute', (route) => {
    if (route.method === 'OPTIONS' || route.config?.crossOrigin === false) return;
    const path = withoutTrailingSlash(route.url ?? route.path);
    if (path.includes('/:')) crossOriginTemplates.push(path.split('/'));
    else crossOriginPaths.add(path);
  });
  const isCrossOrigin = (path: string) => {
    if (crossOriginPaths.has(path)) return true;
    const segments = path.split('/');
    return crossOriginTemplates.some((template) =>
      template.length === segments.length && template.every((part, i) => (part.startsWith(':') ? segments[i] !== '' : part === segments[i])));
  };
  scope.addHook('onRequest', (request, reply, done) => {
    if (request.routeOptions.config.crossOrigin !== false) reply.headers(ANSWER_HEADERS);
    done();
  });
  // Answered before any body is read: a preflight has none, and what else comes is unknown.
  scope.options('*', {
    schema: { hide: true },
    config: { crossOrigin: false },
    onRequest: (request, reply) => {
      const isPreflight = request.headers.origin !== undefined && request.headers['access-control-request-method'] !== undefined;
      if (isPreflight && isCrossOrigin(withoutTrailingSlash(request.url.split('?', 1)[0]!))) reply.code(204).headers(PREFLIGHT_HEADERS).send();
      else reply.callNotFound();
    },
  }, (_request, reply) => reply.callNotFound());
}

/** Both `/oauth2/token` and `/oauth2/token/` are served (app.ts, ignoreTrailingSlash). */
function withoutTrailingSlash(path: string): string {
  return path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
}
