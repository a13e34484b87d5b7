/**
 * CORS (src/http/cross-origin.ts): an app on another origin may read the metadata, the token and
 * revocation endpoints' answers, the resource API's (errors and rate limits included) and the
 * OpenAPI document, and is never let in with cookies; the pages, registration, pushed requests,
 * device authorization, introspection, the event feed and the webhook API stay same-origin, and a
 * preflight is answered only for the paths that allow cross-origin calls.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createAccount } from '../../src/domain/users.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { bearer, userWithToken } from '../support/tokens.js';

cheapPasswordHashing();

const ORIGIN = 'https://app.example';
const OPERATOR = 'operator@example.com';

function preflight(t: TestApp, url: string, method: string, headers = 'authorization') {
  return t.app.inject({
    method: 'OPTIONS',
    url,
    headers: { origin: ORIGIN, 'access-control-request-method': method, 'access-control-request-headers': headers },
  });
}

/** The header names listed in a comma-separated CORS header. */
const listed = (value: unknown) => String(value ?? '').split(',').map((name) => name.trim().toLowerCase());

describe('cross-origin calls from browser apps', () => {
  let t: TestApp;
  let token: string;
  before(async () => {
    t = await createTestApp('sqlite', { RATE_LIMIT: 'on', RATE_LIMIT_API: '2/min', REGISTRATION: 'open', REGISTRATION_OWNER: OPERATOR });
    ({ token } = await userWithToken(t));
    await createAccount(t.database.stores.users, t.clock, { email: OPERATOR, password: 'correct horse battery', displayName: 'Operator' });
  });
  after(() => t.close());

  it('answers the preflight of the API, the token and revocation endpoints and the metadata', async () => {
    for (const [url, method, headers] of [
      ['/v1/users/me', 'GET', 'authorization'],
      ['/v1/users/me/', 'PUT', 'authorization, content-type'],
      ['/v1/users/me/activities/steps?start_time=0', 'GET', 'authorization'],
      ['/v1/users/me/activities/steps/', 'POST', 'authorization, content-type'],
      ['/users', 'PUT', 'authorization, content-type'],
      ['/oauth2/token', 'POST', 'content-type'],
      ['/oauth2/revoke/', 'POST', 'authorization'],
      ['/.well-known/oauth-authorization-server', 'GET', 'authorization'],
      // A route with an id, a DELETE, and a DPoP proof beside the token.
      ['/v1/users/me/sleep/slp_AAAAAAAAAAAAAA', 'DELETE', 'authorization, dpop'],
      ['/v1/users/me/body/weight/wgt_x/', 'DELETE', 'authorization'],
      ['/v1/users/me/activities/steps/?start_time=0&end_time=60', 'DELETE', 'authorization, dpop'],
    ] as const) {
      const response = await preflight(t, url, method, headers);
      assert.equal(response.statusCode, 204, `${method} ${url}`);
      assert.equal(response.headers['access-control-allow-origin'], '*');
      assert.ok(listed(response.headers['access-control-allow-methods']).includes(method.toLowerCase()), `${method} ${url}`);
      for (const header of listed(headers)) assert.ok(listed(response.headers['access-control-allow-headers']).includes(header), `${header} for ${url}`);
      assert.equal(response.headers['access-control-allow-credentials'], undefined);
      assert.ok(Number(response.headers['access-control-max-age']) > 0);
    }
  });

  it('lets the app read answers and errors, with the headers it needs to act on them', async () => {
    const headers = { origin: ORIGIN };
    const profile = await t.app.inject({ method: 'GET', url: '/v1/users/me', headers: { ...headers, ...bearer(token) } });
    assert.equal(profile.statusCode, 200);
    assert.equal(profile.headers['access-control-allow-origin'], '*');
    assert.ok(listed(profile.headers['access-control-expose-headers']).includes('x-ratelimit-remaining'));
    assert.ok(listed(profile.headers['access-control-expose-headers']).includes('dpop-nonce'), 'the nonce a DPoP proof must carry next');

    const unknownToken = await t.app.inject({ method: 'GET', url: '/v1/users/me', headers: { ...headers, ...bearer('sat_nope') } });
    assert.equal(unknownToken.statusCode, 401);
    assert.equal(unknownToken.headers['access-control-allow-origin'], '*');
    assert.match(String(unknownToken.headers['www-authenticate']), /invalid_token/);
    assert.ok(listed(unknownToken.headers['access-control-expose-headers']).includes('www-authenticate'));

    // RATE_LIMIT_API=2/min: the profile read above was the first of this grant's window.
    await t.app.inject({ method: 'GET', url: '/v1/users/me', headers: { ...headers, ...bearer(token) } });
    const limited = await t.app.inject({ method: 'GET', url: '/v1/users/me', headers: { ...headers, ...bearer(token) } });
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.headers['access-control-allow-origin'], '*');
    assert.ok(Number(limited.headers['retry-after']) > 0);
    assert.ok(listed(limited.headers['access-control-expose-headers']).includes('retry-after'));

    for (const [url, payload] of [['/oauth2/token', 'grant_type=refresh_token&refresh_token=srt_nope&client_id=nope'], ['/oauth2/revoke', 'token=x&client_id=nope']]) {
      const response = await t.app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, payload });
      assert.equal(response.statusCode, 401, url);
      assert.equal(response.headers['access-control-allow-origin'], '*', url);
    }
    const metadata = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server', headers });
    assert.equal(metadata.headers['access-control-allow-origin'], '*');
    const openApi = await t.app.inject({ method: 'GET', url: '/openapi.json', headers });
    assert.equal(openApi.statusCode, 200);
    assert.equal(openApi.headers['access-control-allow-origin'], '*');
    for (const response of [profile, unknownToken, limited, metadata]) assert.equal(response.headers['access-control-allow-credentials'], undefined);
  });

  it('keeps the pages, introspection, the event feed and the webhook API same-origin', async () => {
    for (const [method, url] of [
      ['GET', '/login'],
      ['GET', '/account'],
      ['GET', '/dashboard'],
      ['GET', '/oauth2/authorize?client_id=nope'],
      ['POST', '/oauth2/introspect'],
      ['GET', '/v1/events'],
      ['GET', '/v1/webhooks'],
      ['DELETE', '/v1/webhooks/whk_x'],
      ['POST', '/dashboard/apps/sc_x/secret'],
    ] as const) {
      const response = await t.app.inject({ method, url, headers: { origin: ORIGIN } });
      assert.equal(response.headers['access-control-allow-origin'], undefined, `${method} ${url}`);
      const refused = await preflight(t, url, method);
      assert.equal(refused.statusCode, 404, `preflight of ${method} ${url}`);
      assert.equal(refused.headers['access-control-allow-origin'], undefined, `preflight of ${method} ${url}`);
    }
  });

  it('keeps registration, pushed requests and device authorization same-origin: a page elsewhere registers no app from its visitors', async () => {
    // The attack: a page's fetch registers an app from the visitor's address and reads its secret.
    const registered = await t.app.inject({
      method: 'POST', url: '/oauth2/register', headers: { origin: ORIGIN },
      payload: { redirect_uris: ['https://app.example/cb'], client_name: 'Elsewhere' },
    });
    assert.equal(registered.statusCode, 201, 'a server may still register');
    assert.equal(registered.headers['access-control-allow-origin'], undefined, 'but no page may read the answer');
    const { client_id: clientId, registration_access_token: registrationToken } = registered.json();
    for (const [method, url, headers] of [
      ['POST', '/oauth2/register', 'content-type'],
      ['POST', '/oauth2/register/', 'content-type'],
      ['GET', `/oauth2/register/${clientId}`, 'authorization'],
      ['PUT', `/oauth2/register/${clientId}`, 'authorization, content-type'],
      ['DELETE', `/oauth2/register/${clientId}/`, 'authorization'],
      ['POST', '/oauth2/par', 'content-type'],
      ['POST', '/oauth2/device_authorization', 'content-type'],
    ] as const) {
      const refused = await preflight(t, url, method, headers);
      assert.equal(refused.statusCode, 404, `preflight of ${method} ${url}`);
      assert.equal(refused.headers['access-control-allow-origin'], undefined, `preflight of ${method} ${url}`);
    }
    const read = await t.app.inject({ method: 'GET', url: `/oauth2/register/${clientId}`, headers: { origin: ORIGIN, ...bearer(registrationToken) } });
    assert.equal(read.statusCode, 200);
    assert.equal(read.headers['access-control-allow-origin'], undefined, 'GET /oauth2/register/{client_id}');
    for (const url of ['/oauth2/par', '/oauth2/device_authorization']) {
      const response = await t.app.inject({
        method: 'POST', url, headers: { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded' }, payload: `client_id=${clientId}`,
      });
      assert.equal(response.statusCode, 401, url);
      assert.equal(response.headers['access-control-allow-origin'], undefined, url);
    }
  });

  it('treats an OPTIONS request that is no preflight as an unknown endpoint', async () => {
    const bare = await t.app.inject({ method: 'OPTIONS', url: '/v1/users/me' });
    assert.equal(bare.statusCode, 404);
    assert.equal(bare.json().error, 'not_found');
    const withoutMethod = await t.app.inject({ method: 'OPTIONS', url: '/oauth2/token', headers: { origin: ORIGIN } });
    assert.equal(withoutMethod.statusCode, 404);
    // Refused before any body is read (found by test/fuzz/oauth.test.ts: a 415 here).
    const withBody = await t.app.inject({ method: 'OPTIONS', url: '/.well-known/oauth-authorization-server', headers: { 'content-type': 'application/xml' }, payload: '<x/>' });
    assert.equal(withBody.statusCode, 404);
  });
});
