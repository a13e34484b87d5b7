/**
 * Malformed and hostile input never makes the server fail: every answer is a 2xx–4xx, and every
 * JSON error has the one error shape. Deterministic pseudo-random inputs, so a failure repeats.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { bearer, userWithToken } from '../support/tokens.js';
import { Browser } from '../oauth/flow.js';
import { newAccount, signedIn, submit } from '../web/pages-support.js';
import { cheapPasswordHashing } from '../support/passwords.js';

cheapPasswordHashing();

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

/**
 * NUL characters: PostgreSQL refuses them in text values, so one that reached a statement would
 * fail it — and a statement batched with other requests' (refresh reads, bearer checks) with them.
 * Every parameter of every endpoint, alone and inside a value, in the query, the form body and HTTP
 * Basic credentials.
 */
forEachDialect('NUL characters in input', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect);
  });
  after(() => t.close());

  it('are refused with 4xx, never reach a statement that fails', async () => {
    const endpoints = [
      { method: 'GET', url: '/oauth2/authorize' },
      { method: 'POST', url: '/oauth2/token' },
      { method: 'POST', url: '/oauth2/revoke' },
      { method: 'POST', url: '/oauth2/introspect' },
      { method: 'POST', url: '/login' },
      { method: 'POST', url: '/signup' },
    ] as const;
    const grantTypes = ['authorization_code', 'refresh_token', 'client_credentials'];
    const values = ['%00', 'a%00b', 'srt_%00%00%00%00%00%00%00%00%00%00%00%00', 'sat_0123456789ab%00'];
    const failures: string[] = [];
    for (const { method, url } of endpoints) {
      for (const grantType of grantTypes) {
        for (const name of [...NAMES, 'email', 'password', 'display_name']) {
          for (const value of values) {
            const base: Record<string, string> = { grant_type: grantType, client_id: 'c', email: 'a%40b.example', password: 'longenoughpassword' };
            const fields = Object.entries({ ...base, [name]: value }).map(([key, v]) => `${key}=${v}`).join('&');
            const response = await t.app.inject(
              method === 'GET'
                ? { method, url: `${url}?${fields}` }
                : { method, url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: fields },
            );
            if (response.statusCode >= 500) failures.push(`${response.statusCode} ${method} ${url} ${fields}`);
          }
        }
        const basic = Buffer.from('a%00b:secret').toString('base64');
        const response = await t.app.inject({
          method: 'POST',
          url,
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${basic}` },
          payload: `grant_type=${grantType}&refresh_token=x&token=x&code=x`,
        });
        if (response.statusCode >= 500) failures.push(`${response.statusCode} POST ${url} with a NUL in the Basic client id`);
      }
    }
    assert.deepEqual(failures, []);
  });
});

forEachDialect('NUL characters in page forms', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect);
  });
  after(() => t.close());

  it('are refused with a page, never a server error', async () => {
    const developer = await signedIn(t, await newAccount(t, 'Developer'));
    const forms: Array<{ browser: () => Browser; page: string; action: string; fields: Record<string, string> }> = [
      { browser: () => new Browser(t.app), page: '/login', action: '/login', fields: { email: 'a@b.example', password: 'longenoughpassword' } },
      { browser: () => new Browser(t.app), page: '/signup', action: '/signup', fields: { email: 'new@b.example', display_name: 'New', password: 'longenoughpassword' } },
      {
        browser: () => developer,
        page: '/dashboard/apps/new',
        action: '/dashboard/apps',
        fields: { name: 'App', description: 'About', website_url: 'https://app.example', redirect_uris: 'https://app.example/cb', scopes: 'read_profile' },
      },
      { browser: () => developer, page: '/account', action: '/account/profile', fields: { display_name: 'Dev', timezone: 'UTC', daily_step_goal: '8000', stride_length_cm: '70' } },
    ];
    const failures: string[] = [];
    for (const { browser, page, action, fields } of forms) {
      for (const name of Object.keys(fields)) {
        for (const value of ['\u0000', `${fields[name]}\u0000`]) {
          const response = await submit(browser(), page, action, { ...fields, [name]: value });
          if (response.status >= 500) failures.push(`${response.status} ${action} ${name}=${JSON.stringify(value)}`);
        }
      }
    }
    for (const path of ['/dashboard/apps/%00', '/dashboard/apps/a%00b/delete']) {
      const response = await developer.get(path);
      if (response.status >= 500) failures.push(`${response.status} GET ${path}`);
    }
    assert.deepEqual(failures, []);
  });
});
