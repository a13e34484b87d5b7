/**
 * Malformed and hostile input never makes the server fail: every answer is a 2xx–4xx, and every
 * JSON error has the one error shape. Deterministic pseudo-random inputs, so a failure repeats.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { bearer, userWithToken } from '../support/tokens.js';

function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

const ODD_VALUES = [
  '', ' ', '0', '-1', '1e309', 'NaN', '9007199254740993', '1.5', '[]', '{}', 'null', 'true', '%00', '%ZZ', '\u0000',
  "' or 1=1 --", '<script>alert(1)</script>', '../../etc/passwd', 'a'.repeat(5000), '😀', 'UTC', 'Europe/Berlin',
  'day', 'minute', 'hour', 'code', 'S256', 'plain', 'Bearer', 'read_profile', 'http://evil.example/cb',
];
const NAMES = [
  'start_time', 'end_time', 'granularity', 'timezone', 'client_id', 'redirect_uri', 'redirect_url', 'response_type',
  'scope', 'state', 'code', 'code_challenge', 'code_challenge_method', 'grant_type', 'refresh_token', 'client_secret',
  'code_verifier', 'token', 'token_type_hint', 'prompt', 'return_to', 'x',
];

forEachDialect('malformed input', (dialect) => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await createTestApp(dialect);
    ({ token } = await userWithToken(t));
  });
  after(() => t.close());

  it('never answers 5xx, and JSON errors keep their shape', async () => {
    const random = prng(20261121);
    const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
    const params = () => {
      const count = Math.floor(random() * 5);
      return Array.from({ length: count }, () => `${encodeURIComponent(pick(NAMES))}=${random() < 0.2 ? pick(ODD_VALUES) : encodeURIComponent(pick(ODD_VALUES))}`).join('&');
    };
    const targets: Array<{ method: 'GET' | 'POST' | 'PUT'; url: string; auth?: boolean }> = [
      { method: 'GET', url: '/oauth2/authorize' },
      { method: 'POST', url: '/oauth2/token' },
      { method: 'POST', url: '/oauth2/revoke' },
      { method: 'POST', url: '/oauth2/introspect' },
      { method: 'GET', url: '/v1/users/me/activities/steps', auth: true },
      { method: 'POST', url: '/v1/users/me/activities/steps', auth: true },
      { method: 'PUT', url: '/v1/users/me', auth: true },
      { method: 'GET', url: '/login' },
      { method: 'POST', url: '/login' },
      { method: 'POST', url: '/signup' },
      { method: 'GET', url: '/demo/callback' },
    ];
    const bodies = [
      () => ({ type: 'application/x-www-form-urlencoded', payload: params() }),
      () => ({ type: 'application/json', payload: pick(['{', '[]', 'null', '{"samples":5}', '{"samples":[{"start_time":"x"}]}', '{"display_name":{}}', '"x"', '{"timezone":"Mars/Base"}', '{"daily_step_goal":1e400}']) }),
      () => ({ type: 'text/plain', payload: 'hello' }),
      () => ({ type: 'application/json; charset=utf-16', payload: '{}' }),
    ];
    for (let i = 0; i < 400; i++) {
      const target = pick(targets);
      const headers: Record<string, string> = {};
      if (target.auth) Object.assign(headers, random() < 0.8 ? bearer(token) : { authorization: pick(['Bearer', 'Basic x', 'Bearer a b', `Bearer ${token}x`]) });
      if (random() < 0.2) headers.authorization = `Basic ${Buffer.from(`${pick(ODD_VALUES)}:${pick(ODD_VALUES)}`).toString('base64')}`;
      const query = params();
      const url = query ? `${target.url}?${query}` : target.url;
      const body = target.method === 'GET' ? undefined : pick(bodies)();
      const response = await t.app.inject({
        method: target.method,
        url,
        headers: body ? { ...headers, 'content-type': body.type } : headers,
        ...(body && { payload: body.payload }),
      });
      const where = `${target.method} ${url.slice(0, 200)} ${body ? `${body.type} ${body.payload.slice(0, 100)}` : ''}`;
      assert.ok(response.statusCode < 500, `${response.statusCode} for ${where}: ${response.body.slice(0, 300)}`);
      if (String(response.headers['content-type']).startsWith('application/json') && response.statusCode >= 400) {
        const error = response.json();
        assert.equal(typeof error.error, 'string', where);
        assert.equal(typeof error.error_description, 'string', where);
      }
    }
  });
});
