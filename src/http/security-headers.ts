/**
 * Security headers on every response (docs/SECURITY.md), fixed at start-up and set by one hook.
 *
 * Pages, the authorization endpoint and everything else outside the resource API and the
 * client endpoints (token, revocation, introspection) get the headers
 * @fastify/helmet sends with the options below (test/http/security-headers.test.ts holds the two
 * equal). Pages cannot be framed (CSP frame-ancestors 'none' and X-Frame-Options DENY). There is
 * deliberately no `form-action` directive: Chromium applies it to the redirect that follows the
 * consent form, which goes to the app's own redirect URI on another origin.
 *
 * The resource API and the client endpoints answer JSON to programs, never a document a browser
 * renders, so the headers meant for pages (framing, cross-origin isolation, download and
 * DNS-prefetch switches) do not apply there. Their answers get a small fixed set: no MIME
 * sniffing, never cached (they carry a person's data or credentials), and a CSP that forbids
 * everything should one be opened as a document anyway.
 */
import type { FastifyInstance } from 'fastify';

declare module 'fastify' {
  interface FastifyInstance {
    /** The security headers of the routes of this scope (inherited by child scopes). */
    securityHeaders: Readonly<Record<string, string>>;
  }
}

/** The options @fastify/helmet would be registered with to send pageSecurityHeaders(). */
export function helmetOptions(https: boolean) {
  return {
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        'default-src': ["'self'"],
        'base-uri': ["'none'"],
        'object-src': ["'none'"],
        'img-src': ["'self'", 'data:'],
        'frame-ancestors': ["'none'"],
      },
    },
    frameguard: { action: 'deny' as const },
    referrerPolicy: { policy: 'no-referrer' as const },
    hsts: https ? { maxAge: 15_552_000, includeSubDomains: false } : (false as const),
  };
}

/** What helmetOptions(https) makes helmet send. */
export function pageSecurityHeaders(https: boolean): Readonly<Record<string, string>> {
  return Object.freeze({
    'content-security-policy': "default-src 'self';base-uri 'none';object-src 'none';img-src 'self' data:;frame-ancestors 'none'",
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'origin-agent-cluster': '?1',
    'referrer-policy': 'no-referrer',
    ...(https && { 'strict-transport-security': 'max-age=15552000' }),
    'x-content-type-options': 'nosniff',
    'x-dns-prefetch-control': 'off',
    'x-download-options': 'noopen',
    'x-frame-options': 'DENY',
    'x-permitted-cross-domain-policies': 'none',
    'x-xss-protection': '0',
  });
}

/** The headers of every resource API answer, errors included (HSTS too, like the pages). */
export function apiSecurityHeaders(https: boolean): Readonly<Record<string, string>> {
  return Object.freeze({
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    ...(https && { 'strict-transport-security': 'max-age=15552000' }),
  });
}

const isHttps = (app: FastifyInstance) => app.ctx.config.publicUrl.startsWith('https:');

/**
 * Every response gets the headers of the scope its route was registered in (the page set unless
 * useApiSecurityHeaders changed it); routes may still override one, like before. app.ts sets them
 * in its one per-request hook (with the request id).
 */
export function registerSecurityHeaders(app: FastifyInstance): void {
  app.decorate('securityHeaders', pageSecurityHeaders(isHttps(app)));
}

/** Makes the routes of `scope` (an encapsulated plugin) answer with apiSecurityHeaders(). */
export function useApiSecurityHeaders(scope: FastifyInstance): void {
  // A child scope may decorate a name its parent has: the value is the child's own.
  scope.decorate('securityHeaders', apiSecurityHeaders(isHttps(scope)));
}
