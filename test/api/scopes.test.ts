import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { ALL_RESOURCE_SCOPES, bearer, createUser, issueAccessToken, type TestUser } from '../support/tokens.js';

interface RouteCase {
  method: 'GET' | 'PUT' | 'POST' | 'DELETE';
  url: string;
  scope: string;
  payload?: unknown;
  /** The answer with the scope, when not 200 (a DELETE of an id that names nothing). */
  granted?: number;
}

const NIGHT = { start_time: 1_700_000_000, end_time: 1_700_003_600, stages: [{ stage: 'light', start_time: 1_700_000_000, end_time: 1_700_003_600 }] };

const ROUTES: RouteCase[] = [
  { method: 'GET', url: '/v1/users/me', scope: 'read_profile' },
  { method: 'GET', url: '/users', scope: 'read_profile' },
  { method: 'PUT', url: '/v1/users/me', scope: 'write_profile', payload: {} },
  { method: 'PUT', url: '/users', scope: 'write_profile', payload: {} },
  { method: 'GET', url: '/v1/users/me/activities/steps/', scope: 'read_activity' },
  { method: 'GET', url: '/v1/users/me/activities/steps', scope: 'read_activity' },
  { method: 'POST', url: '/v1/users/me/activities/steps/', scope: 'write_activity', payload: { samples: [] } },
  { method: 'POST', url: '/v1/users/me/activities/steps', scope: 'write_activity', payload: { samples: [] } },
  { method: 'GET', url: '/v1/users/me/heartrate/', scope: 'read_heartrate' },
  { method: 'GET', url: '/v1/users/me/heartrate', scope: 'read_heartrate' },
  { method: 'POST', url: '/v1/users/me/heartrate/', scope: 'write_heartrate', payload: { samples: [] } },
  { method: 'POST', url: '/v1/users/me/heartrate', scope: 'write_heartrate', payload: { samples: [{ time: 1_700_000_000, bpm: 61 }] } },
  { method: 'DELETE', url: '/v1/users/me/heartrate/?start_time=1700000000&end_time=1700000060', scope: 'write_heartrate' },
  { method: 'DELETE', url: '/v1/users/me/heartrate?start_time=1700000000&end_time=1700000060', scope: 'write_heartrate' },
  { method: 'GET', url: '/v1/users/me/sleep/', scope: 'read_sleep' },
  { method: 'GET', url: '/v1/users/me/sleep', scope: 'read_sleep' },
  { method: 'POST', url: '/v1/users/me/sleep/', scope: 'write_sleep', payload: NIGHT },
  { method: 'POST', url: '/v1/users/me/sleep', scope: 'write_sleep', payload: NIGHT },
  { method: 'DELETE', url: '/v1/users/me/sleep/slp_AAAAAAAAAAAAAA', scope: 'write_sleep', granted: 404 },
  { method: 'GET', url: '/v1/users/me/body/weight/', scope: 'read_body' },
  { method: 'GET', url: '/v1/users/me/body/weight', scope: 'read_body' },
  { method: 'POST', url: '/v1/users/me/body/weight/', scope: 'write_body', payload: { time: 1_700_000_000, kg: 70.5 } },
  { method: 'POST', url: '/v1/users/me/body/weight', scope: 'write_body', payload: { time: 1_700_000_000, kg: 70.5 } },
  { method: 'DELETE', url: '/v1/users/me/body/weight/wgt_AAAAAAAAAAAAAA', scope: 'write_body', granted: 404 },
  ...['steps', 'distance', 'calories'].flatMap((metric): RouteCase[] => {
    const path = `/v1/users/me/activities/${metric}`;
    const range = '?start_time=1700000000&end_time=1700086400';
    return [
      ...(metric === 'steps' ? [] : [
        { method: 'GET' as const, url: `${path}/`, scope: 'read_activity' },
        { method: 'GET' as const, url: path, scope: 'read_activity' },
        { method: 'POST' as const, url: `${path}/`, scope: 'write_activity', payload: { samples: [] } },
        { method: 'POST' as const, url: path, scope: 'write_activity', payload: { samples: [] } },
      ]),
      { method: 'DELETE', url: `${path}/${range}`, scope: 'write_activity' },
      { method: 'DELETE', url: `${path}${range}`, scope: 'write_activity' },
    ];
  }),
];

forEachDialect('resource API scopes and bearer tokens', (dialect) => {
  let t: TestApp;
  let user: TestUser;
  const tokens = new Map<string, string>();

  before(async () => {
    t = await createTestApp(dialect);
    user = await createUser(t);
    for (const scope of ALL_RESOURCE_SCOPES) tokens.set(scope, (await issueAccessToken(t, user, [scope])).token);
    tokens.set('none', (await issueAccessToken(t, user, [])).token);
    tokens.set('all', (await issueAccessToken(t, user, ALL_RESOURCE_SCOPES)).token);
  });
  after(() => t.close());

  const send = (route: RouteCase, headers: Record<string, string>) =>
    t.app.inject({ method: route.method, url: route.url, headers, ...(route.payload !== undefined && { payload: route.payload as object }) });

  for (const route of ROUTES) {
    it(`${route.method} ${route.url} needs exactly ${route.scope}`, async () => {
      for (const [held, token] of tokens) {
        const response = await send(route, bearer(token));
        if (held === route.scope || held === 'all') {
          assert.equal(response.statusCode, route.granted ?? 200, `${held}: ${response.body}`);
        } else {
          assert.equal(response.statusCode, 403, `${held}: ${response.body}`);
          assert.equal(response.json().error, 'insufficient_scope');
          assert.match(response.json().error_description, new RegExp(route.scope));
          assert.match(String(response.headers['www-authenticate']), new RegExp(`error="insufficient_scope", scope="${route.scope}"`));
        }
      }
    });

    it(`${route.method} ${route.url} answers 401 invalid_token without a valid token`, async () => {
      const missing = await send(route, {});
      assert.equal(missing.statusCode, 401);
      assert.equal(missing.json().error, 'invalid_token');
      assert.equal(missing.headers['www-authenticate'], 'Bearer realm="stride", DPoP algs="ES256 ES384 EdDSA Ed25519 PS256 RS256"');

      const unknown = await send(route, bearer('sat_not-a-real-token'));
      assert.equal(unknown.statusCode, 401);
      assert.equal(unknown.json().error, 'invalid_token');
      assert.match(String(unknown.headers['www-authenticate']), /error="invalid_token"/);
    });
  }

  it('refuses an expired token on every route', async () => {
    const { token } = await issueAccessToken(t, user, ALL_RESOURCE_SCOPES, 60);
    assert.equal((await send(ROUTES[0]!, bearer(token))).statusCode, 200);
    t.clock.advance(61);
    try {
      for (const route of ROUTES) {
        const response = await send(route, bearer(token));
        assert.equal(response.statusCode, 401, `${route.method} ${route.url}`);
        assert.equal(response.json().error, 'invalid_token');
      }
    } finally {
      t.clock.advance(-61);
    }
  });

  it('checks the heart-rate scope before reading the body', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/users/me/heartrate/',
      headers: { ...bearer(tokens.get('read_heartrate')!), 'content-type': 'application/json' },
      payload: '{"samples": not json',
    });
    assert.equal(response.statusCode, 403);
  });

  it('checks the scope before reading the body', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/users/me/activities/steps',
      headers: { ...bearer(tokens.get('read_activity')!), 'content-type': 'application/json' },
      payload: '{"samples": not json',
    });
    assert.equal(response.statusCode, 403);
  });

  it('checks the scope before looking for the record to delete', async () => {
    const night = await send(ROUTES.find((route) => route.url === '/v1/users/me/sleep/' && route.method === 'POST')!, bearer(tokens.get('write_sleep')!));
    const id = (night.json() as { id: string }).id;
    for (const held of ['read_sleep', 'write_body', 'none']) {
      const response = await t.app.inject({ method: 'DELETE', url: `/v1/users/me/sleep/${id}`, headers: bearer(tokens.get(held)!) });
      assert.equal(response.statusCode, 403, held);
    }
    const response = await t.app.inject({ method: 'DELETE', url: `/v1/users/me/sleep/${id}`, headers: bearer(tokens.get('write_sleep')!) });
    assert.equal(response.statusCode, 200, response.body);
  });
});
