/** RFC 7009 revocation, RFC 7662 introspection and RFC 8414 metadata. */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { registerApp } from '../../src/domain/apps.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { createFixture, createOAuthTestApp, encodeForm, obtainTokens, refresh, REDIRECT_URI, useToken, type Fixture } from './flow.js';
import { cheapPasswordHashing } from '../support/passwords.js';

cheapPasswordHashing();

forEachDialect('revocation, introspection and metadata', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  let other: { clientId: string; secret: string };
  before(async () => {
    t = await createOAuthTestApp(dialect, { PUBLIC_URL: 'https://stride.example', AUTH_URL: 'https://login.stride.example' });
    f = await createFixture(t);
    const registered = await registerApp(t.database.stores.apps, t.clock, f.developer.id, { name: 'Other', redirectUris: [REDIRECT_URI], scopes: ['read_profile'], isPublic: false });
    other = { clientId: registered.app.clientId, secret: registered.clientSecret! };
  });
  after(() => t.close());

  const post = (path: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'POST', url: path, headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: encodeForm(form) });
  const asApp = () => ({ client_id: f.app.clientId, client_secret: f.secret });
  const asOther = () => ({ client_id: other.clientId, client_secret: other.secret });

  it('revoking a refresh token ends its access tokens too; a token_type_hint is optional', async () => {
    const tokens = await obtainTokens(t, f);
    const sibling = await obtainTokens(t, f); // another family of the same grant
    const response = await post('/oauth2/revoke', { token: tokens.refresh_token, token_type_hint: 'refresh_token', ...asApp() });
    assert.equal(response.statusCode, 200);
    assert.equal(response.body, '');
    assert.equal(await useToken(t, tokens.access_token), 401);
    assert.equal((await refresh(t, f, tokens.refresh_token)).json().error, 'invalid_grant');
    assert.equal(await useToken(t, sibling.access_token), 200, 'only the revoked family ends');

    const more = await obtainTokens(t, f);
    assert.equal((await post('/oauth2/revoke', { token: more.refresh_token, ...asApp() })).statusCode, 200);
    assert.equal(await useToken(t, more.access_token), 401);
  });

  it('a wrong hint still finds the token', async () => {
    const tokens = await obtainTokens(t, f);
    assert.equal((await post('/oauth2/revoke', { token: tokens.access_token, token_type_hint: 'refresh_token', ...asApp() })).statusCode, 200);
    assert.equal(await useToken(t, tokens.access_token), 401);
  });

  it('answers 200 for an unknown token and does not revoke a token of another client', async () => {
    assert.equal((await post('/oauth2/revoke', { token: 'sat_unknown', ...asApp() })).statusCode, 200);
    const tokens = await obtainTokens(t, f);
    assert.equal((await post('/oauth2/revoke', { token: tokens.access_token, ...asOther() })).statusCode, 200);
    assert.equal((await post('/oauth2/revoke', { token: tokens.refresh_token, ...asOther() })).statusCode, 200);
    assert.equal(await useToken(t, tokens.access_token), 200);
    assert.equal((await refresh(t, f, tokens.refresh_token)).statusCode, 200);
  });

  it('requires client authentication and a token', async () => {
    const tokens = await obtainTokens(t, f);
    const unauthenticated = await post('/oauth2/revoke', { token: tokens.access_token });
    assert.equal(unauthenticated.statusCode, 401);
    assert.equal(unauthenticated.json().error, 'invalid_client');
    const wrong = await post('/oauth2/revoke', { token: tokens.access_token, client_id: f.app.clientId, client_secret: 'nope' });
    assert.equal(wrong.statusCode, 401);
    assert.equal(await useToken(t, tokens.access_token), 200);
    assert.equal((await post('/oauth2/revoke', asApp())).json().error, 'invalid_request');
  });

  it('introspects its own live tokens with the RFC 7662 fields', async () => {
    const tokens = await obtainTokens(t, f);
    const access = await post('/oauth2/introspect', { token: tokens.access_token, ...asApp() });
    assert.equal(access.statusCode, 200);
    assert.equal(access.headers['cache-control'], 'no-store');
    const body = access.json();
    assert.deepEqual(Object.keys(body).sort(), ['active', 'client_id', 'exp', 'iat', 'scope', 'sub', 'token_type']);
    assert.equal(body.active, true);
    assert.equal(body.client_id, f.app.clientId);
    assert.equal(body.sub, f.user.id);
    assert.equal(body.scope, tokens.scope);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.iat, t.clock());
    assert.equal(body.exp, t.clock() + t.config.accessTokenTtl);

    const refreshInfo = (await post('/oauth2/introspect', { token: tokens.refresh_token, ...asApp() })).json();
    assert.equal(refreshInfo.active, true);
    assert.equal(refreshInfo.token_type, 'refresh_token');
  });

  it('reports active:false for other clients, unknown, revoked, rotated and expired tokens', async () => {
    const tokens = await obtainTokens(t, f);
    const inactive = async (token: string, client = asApp()) => {
      const response = await post('/oauth2/introspect', { token, ...client });
      assert.equal(response.statusCode, 200);
      assert.deepEqual(response.json(), { active: false });
    };
    await inactive(tokens.access_token, asOther());
    await inactive('sat_unknown');
    const next = (await refresh(t, f, tokens.refresh_token)).json();
    await inactive(tokens.refresh_token); // rotated
    await post('/oauth2/revoke', { token: next.access_token, ...asApp() });
    await inactive(next.access_token);
    const later = await obtainTokens(t, f);
    t.clock.advance(t.config.accessTokenTtl);
    await inactive(later.access_token);
    const unauthenticated = await post('/oauth2/introspect', { token: later.refresh_token });
    assert.equal(unauthenticated.statusCode, 401);
  });

  it('publishes RFC 8414 metadata with issuer = PUBLIC_URL and authorize on AUTH_URL', async () => {
    const response = await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' });
    assert.equal(response.statusCode, 200);
    const m = response.json();
    assert.equal(m.issuer, 'https://stride.example');
    assert.equal(m.authorization_endpoint, 'https://login.stride.example/oauth2/authorize');
    assert.equal(m.token_endpoint, 'https://stride.example/oauth2/token');
    assert.equal(m.revocation_endpoint, 'https://stride.example/oauth2/revoke');
    assert.equal(m.introspection_endpoint, 'https://stride.example/oauth2/introspect');
    assert.deepEqual(m.scopes_supported, ['read_profile', 'write_profile', 'read_activity', 'write_activity', 'read_heartrate', 'write_heartrate', 'read_sleep', 'write_sleep', 'read_body', 'write_body']);
    assert.deepEqual(m.response_types_supported, ['code']);
    assert.deepEqual(m.grant_types_supported, ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code']);
    assert.equal(m.device_authorization_endpoint, 'https://stride.example/oauth2/device_authorization');
    assert.deepEqual(m.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(m.token_endpoint_auth_methods_supported, ['client_secret_basic', 'client_secret_post', 'none']);
    assert.equal(m.authorization_response_iss_parameter_supported, true);
    // RFC 9449 §5.1: exactly the algorithms dpop.ts verifies proofs with (oauth/dpop.test.ts sends proofs).
    assert.deepEqual(m.dpop_signing_alg_values_supported, ['ES256', 'ES384', 'EdDSA', 'Ed25519', 'PS256', 'RS256']);
    assert.equal(m.service_documentation, 'https://stride.example/docs');
  });
});
