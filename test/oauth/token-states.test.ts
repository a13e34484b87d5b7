/**
 * Every state an access token can be in and every invalidation of docs/oauth.md ("When tokens stop
 * working"), each effective on the next request. Each test would fail if its transition broke.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { updateAppSettings } from '../../src/domain/apps.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { Browser, createFixture, createOAuthTestApp, encodeForm, obtainCode, obtainTokens, refresh, signIn, useToken, type Fixture } from './flow.js';
import { cheapPasswordHashing } from '../support/passwords.js';

cheapPasswordHashing();

forEachDialect('access token states', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp(dialect);
    f = await createFixture(t);
  });
  after(() => t.close());

  it('no token → valid: a valid code, client credentials and the exact redirect URI return an access and a refresh token', async () => {
    const tokens = await obtainTokens(t, f);
    assert.match(tokens.access_token, /^sat_/);
    assert.match(tokens.refresh_token, /^srt_/);
    assert.equal(tokens.expires_in, 2592000, 'expires_in is ACCESS_TOKEN_TTL, 30 days by default');
    assert.equal(await useToken(t, tokens.access_token), 200);
  });

  it('valid → invalid when 30 days (the default ACCESS_TOKEN_TTL) have elapsed since issue (401)', async () => {
    const tokens = await obtainTokens(t, f);
    t.clock.advance(2592000 - 1);
    assert.equal(await useToken(t, tokens.access_token), 200);
    t.clock.advance(1);
    const expired = await t.app.inject({ method: 'GET', url: '/test/protected', headers: { authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(expired.statusCode, 401);
    assert.equal(expired.json().error, 'invalid_token');
    assert.match(String(expired.headers['www-authenticate']), /^Bearer realm="stride", error="invalid_token"/);
  });

  it('invalid (expired) → new valid token by refresh_token: a new access token and a NEW refresh token', async () => {
    const tokens = await obtainTokens(t, f);
    t.clock.advance(2592000);
    assert.equal(await useToken(t, tokens.access_token), 401);
    const response = await refresh(t, f, tokens.refresh_token);
    assert.equal(response.statusCode, 200);
    const next = response.json();
    assert.notEqual(next.refresh_token, tokens.refresh_token);
    assert.equal(await useToken(t, next.access_token), 200);
    assert.equal(await useToken(t, tokens.access_token), 401);
  });

  it('valid → invalid when the user revokes the app: every token of that user for that app', async () => {
    const a = await obtainTokens(t, f);
    const b = await obtainTokens(t, f);
    // Another user's tokens for the same app stay valid.
    const browser = new Browser(t.app);
    await signIn(browser, f.developer.email, f.password);
    const { code } = await obtainCode(t, f, {}, browser);
    const othersTokens = (await t.app.inject({
      method: 'POST', url: '/oauth2/token', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: encodeForm({ grant_type: 'authorization_code', code, redirect_uri: 'https://client.example/callback', client_id: f.app.clientId, client_secret: f.secret }),
    })).json();

    assert.equal(await t.database.stores.grants.revokeForUser(f.user.id, f.app.id, t.clock()), true);
    assert.equal(await useToken(t, a.access_token), 401);
    assert.equal(await useToken(t, b.access_token), 401);
    assert.equal((await refresh(t, f, a.refresh_token)).json().error, 'invalid_grant');
    assert.equal(await useToken(t, othersTokens.access_token), 200);
    assert.equal(await t.database.stores.grants.revokeForUser(f.user.id, f.app.id, t.clock()), false);
  });

  it('valid → invalid when the developer changes the scopes: only grants whose scope set differs', async () => {
    const fx = await createFixture(t);
    // The user grants the full registered set; the developer grants only read_profile.
    const full = await obtainTokens(t, fx);
    const browser = new Browser(t.app);
    await signIn(browser, fx.developer.email, fx.password);
    const { code } = await obtainCode(t, fx, { scope: 'read_profile read_activity' }, browser);
    const partial = (await t.app.inject({
      method: 'POST', url: '/oauth2/token', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: encodeForm({ grant_type: 'authorization_code', code, redirect_uri: 'https://client.example/callback', client_id: fx.app.clientId, client_secret: fx.secret }),
    })).json();
    assert.equal(partial.scope, 'read_profile read_activity');

    // New set = read_profile read_activity: the partial grant matches it, the full one differs.
    const app = (await t.database.stores.apps.findById(fx.app.id))!;
    const result = await updateAppSettings(t.database.stores.apps, t.clock, app, { scopes: ['read_activity', 'read_profile'] });
    assert.equal(result.grantsRevoked, 1);
    assert.equal(await useToken(t, full.access_token), 401);
    assert.equal((await refresh(t, fx, full.refresh_token)).json().error, 'invalid_grant');
    assert.equal(await useToken(t, partial.access_token), 200);

    // A change that leaves the set equal revokes nothing.
    const same = await updateAppSettings(t.database.stores.apps, t.clock, result.app, { scopes: ['read_profile', 'read_activity'], name: 'Renamed' });
    assert.equal(same.grantsRevoked, 0);
    assert.equal(await useToken(t, partial.access_token), 200);
  });

  it('valid → invalid when the app is deleted', async () => {
    const fx = await createFixture(t);
    const tokens = await obtainTokens(t, fx);
    await t.database.stores.apps.delete(fx.app.id);
    assert.equal(await useToken(t, tokens.access_token), 401);
    const refreshAfter = await refresh(t, fx, tokens.refresh_token);
    assert.equal(refreshAfter.statusCode, 401, 'the client itself is gone');
  });

  it('valid → invalid when the client revokes the token (RFC 7009)', async () => {
    const tokens = await obtainTokens(t, f);
    const response = await t.app.inject({
      method: 'POST', url: '/oauth2/revoke', headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: encodeForm({ token: tokens.access_token, client_id: f.app.clientId, client_secret: f.secret }),
    });
    assert.equal(response.statusCode, 200);
    assert.equal(await useToken(t, tokens.access_token), 401);
    // The refresh token is untouched by revoking only the access token.
    assert.equal((await refresh(t, f, tokens.refresh_token)).statusCode, 200);
  });
});

forEachDialect('access token lifetime from ACCESS_TOKEN_TTL', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp(dialect, { ACCESS_TOKEN_TTL: '60' });
    f = await createFixture(t);
  });
  after(() => t.close());

  it('reports the configured lifetime truthfully and enforces it', async () => {
    const tokens = await obtainTokens(t, f);
    assert.equal(tokens.expires_in, 60);
    t.clock.advance(59);
    assert.equal(await useToken(t, tokens.access_token), 200);
    t.clock.advance(1);
    assert.equal(await useToken(t, tokens.access_token), 401);
    const next = (await refresh(t, f, tokens.refresh_token)).json();
    assert.equal(next.expires_in, 60);
    assert.equal(await useToken(t, next.access_token), 200);
  });
});
