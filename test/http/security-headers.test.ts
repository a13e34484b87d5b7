/**
 * Security headers (src/http/security-headers.ts): the pages' set is exactly what @fastify/helmet
 * sends with the same options, every response outside the resource API keeps it, and the
 * resource API answers with its own small set, errors included.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import helmet from '@fastify/helmet';
import Fastify from 'fastify';
import { apiSecurityHeaders, helmetOptions, pageSecurityHeaders } from '../../src/http/security-headers.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { bearer, userWithToken } from '../support/tokens.js';

const PAGE_ONLY = ['x-frame-options', 'cross-origin-opener-policy', 'cross-origin-resource-policy', 'origin-agent-cluster', 'x-download-options'];

/** The headers a response carries that `expected` names, plus any other security header. */
function securityHeadersOf(headers: Record<string, unknown>): Record<string, string> {
  const ignored = new Set(['content-type', 'content-length', 'date', 'connection', 'keep-alive', 'x-request-id', 'www-authenticate', 'location', 'set-cookie', 'vary']);
  // CORS headers (test/http/cross-origin.test.ts) are not security headers.
  const isSecurityHeader = (name: string) => !ignored.has(name) && !name.startsWith('access-control-');
  return Object.fromEntries(Object.entries(headers).filter(([name]) => isSecurityHeader(name)).map(([name, value]) => [name, String(value)]));
}

describe('security headers', () => {
  for (const https of [false, true]) {
    it(`gives pages exactly what @fastify/helmet sends (${https ? 'https' : 'http'})`, async () => {
      const reference = Fastify();
      await reference.register(helmet, helmetOptions(https));
      reference.get('/', async () => 'page');
      const response = await reference.inject({ method: 'GET', url: '/' });
      await reference.close();
      assert.deepEqual(securityHeadersOf(response.headers), { ...pageSecurityHeaders(https) });
    });
  }

  for (const publicUrl of ['http://stride.test', 'https://stride.test']) {
    describe(`on ${publicUrl}`, () => {
      const https = publicUrl.startsWith('https:');
      let t: TestApp;
      let token: string;
      before(async () => {
        t = await createTestApp('sqlite', { PUBLIC_URL: publicUrl });
        ({ token } = await userWithToken(t));
      });
      after(() => t.close());

      it('keeps the page set on pages, the authorization endpoint, metadata, health checks and unknown paths', async () => {
        const responses = [
          await t.app.inject({ method: 'GET', url: '/login' }),
          await t.app.inject({ method: 'GET', url: '/signup' }),
          await t.app.inject({ method: 'GET', url: '/oauth2/authorize?client_id=nope' }),
          await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' }),
          await t.app.inject({ method: 'GET', url: '/healthz' }),
          await t.app.inject({ method: 'GET', url: '/no/such/page' }),
        ];
        for (const response of responses) {
          for (const [name, value] of Object.entries(pageSecurityHeaders(https))) {
            assert.equal(response.headers[name], value, `${response.raw.req?.url ?? ''} ${response.statusCode}: ${name}`);
          }
        }
      });

      it('gives resource API answers, errors included, the API set and not the page-only headers', async () => {
        const responses = [
          await t.app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(token) }),
          await t.app.inject({ method: 'GET', url: '/users', headers: bearer(token) }),
          await t.app.inject({ method: 'PUT', url: '/v1/users/me', headers: bearer(token), payload: { daily_step_goal: 9000 } }),
          await t.app.inject({ method: 'GET', url: '/v1/users/me/activities/steps', headers: bearer(token) }),
          await t.app.inject({ method: 'GET', url: '/v1/users/me' }),
          await t.app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer('sat_unknown') }),
          await t.app.inject({ method: 'GET', url: '/v1/users/me/activities/steps?granularity=week', headers: bearer(token) }),
        ];
        assert.deepEqual(responses.map((r) => r.statusCode), [200, 200, 200, 200, 401, 401, 400]);
        for (const response of responses) {
          assert.deepEqual(securityHeadersOf(response.headers), { ...apiSecurityHeaders(https) }, `${response.statusCode} ${response.body}`);
          for (const name of PAGE_ONLY) assert.equal(response.headers[name], undefined, name);
        }
        assert.equal(responses[0]!.headers['cache-control'], 'no-store');
      });

      it('gives the token, revocation and introspection endpoints the API set, errors included', async () => {
        const form = { 'content-type': 'application/x-www-form-urlencoded' };
        const responses = [
          await t.app.inject({ method: 'POST', url: '/oauth2/token', payload: 'grant_type=password', headers: form }),
          await t.app.inject({ method: 'POST', url: '/oauth2/token/', payload: 'grant_type=refresh_token&client_id=nope&client_secret=x&refresh_token=y', headers: form }),
          await t.app.inject({ method: 'POST', url: '/oauth2/revoke', payload: 'token=x', headers: form }),
          await t.app.inject({ method: 'POST', url: '/oauth2/introspect', payload: 'token=x', headers: form }),
          await t.app.inject({ method: 'POST', url: '/oauth2/token', payload: '{}', headers: { 'content-type': 'application/json' } }),
        ];
        assert.deepEqual(responses.map((r) => r.statusCode), [401, 401, 401, 401, 415]);
        for (const response of responses) {
          const { pragma: _pragma, 'x-ratelimit-limit': _l, 'x-ratelimit-remaining': _r, 'x-ratelimit-reset': _s, ...headers } = securityHeadersOf(response.headers);
          assert.deepEqual(headers, { ...apiSecurityHeaders(https) }, `${response.statusCode} ${response.body}`);
          for (const name of PAGE_ONLY) assert.equal(response.headers[name], undefined, name);
        }
      });
    });
  }
});
