/** The refresh_token grant with rotation, the replay window and reuse detection (docs/oauth.md). */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { createFixture, createOAuthTestApp, obtainTokens, refresh, REDIRECT_URI, tokenRequest, useToken, type Fixture } from './flow.js';
import { cheapPasswordHashing } from '../support/passwords.js';

cheapPasswordHashing();

forEachDialect('token endpoint: refresh_token grant', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    t = await createOAuthTestApp(dialect, { REFRESH_REPLAY_WINDOW: '30' });
    f = await createFixture(t);
  });
  after(() => t.close());

  it('rotates: a new access and refresh token, the old refresh token dead after the window', async () => {
    const tokens = await obtainTokens(t, f);
    const response = await refresh(t, f, tokens.refresh_token);
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(response.headers['cache-control'], 'no-store');
    const next = response.json();
    assert.notEqual(next.access_token, tokens.access_token);
    assert.notEqual(next.refresh_token, tokens.refresh_token);
    assert.equal(next.token_type, 'Bearer');
    assert.equal(next.expires_in, t.config.accessTokenTtl);
    assert.equal(next.scope, tokens.scope);
    assert.equal(await useToken(t, next.access_token), 200);
    // The new refresh token works in turn.
    t.clock.advance(31);
    const third = await refresh(t, f, next.refresh_token);
    assert.equal(third.statusCode, 200);
  });

  it('a retry of the same refresh inside the window gets the same tokens, with the remaining lifetime', async () => {
    const tokens = await obtainTokens(t, f);
    const first = (await refresh(t, f, tokens.refresh_token)).json();
    t.clock.advance(20);
    const retry = await refresh(t, f, tokens.refresh_token);
    assert.equal(retry.statusCode, 200);
    const again = retry.json();
    assert.equal(again.access_token, first.access_token);
    assert.equal(again.refresh_token, first.refresh_token);
    assert.equal(again.expires_in, t.config.accessTokenTtl - 20);
    assert.equal(await useToken(t, first.access_token), 200, 'no logout');
    // The chain continues from the replayed refresh token.
    const next = await refresh(t, f, again.refresh_token);
    assert.equal(next.statusCode, 200);
  });

  it('reuse of a rotated refresh token after the window revokes the whole grant', async () => {
    const tokens = await obtainTokens(t, f);
    const next = (await refresh(t, f, tokens.refresh_token)).json();
    t.clock.advance(31);
    const reuse = await refresh(t, f, tokens.refresh_token);
    assert.equal(reuse.statusCode, 400);
    assert.equal(reuse.json().error, 'invalid_grant');
    // Every token of the grant is gone, including the legitimate new pair.
    assert.equal(await useToken(t, next.access_token), 401);
    assert.equal((await refresh(t, f, next.refresh_token)).json().error, 'invalid_grant');
    const grant = await t.database.db.kysely.selectFrom('grants').selectAll().where('user_id', '=', f.user.id).where('app_id', '=', f.app.id).executeTakeFirst();
    assert.equal(grant, undefined);
  });

  it('10 concurrent refreshes of one token all succeed with one surviving chain', async () => {
    const tokens = await obtainTokens(t, f);
    const responses = await Promise.all(Array.from({ length: 10 }, () => refresh(t, f, tokens.refresh_token)));
    for (const r of responses) assert.equal(r.statusCode, 200, r.body);
    const bodies = responses.map((r) => r.json());
    assert.equal(new Set(bodies.map((b) => b.refresh_token)).size, 1);
    assert.equal(new Set(bodies.map((b) => b.access_token)).size, 1);
    const rows = await t.database.db.kysely
      .selectFrom('refresh_tokens')
      .select(['rotated_at'])
      .where('family_id', '=', (await t.database.db.kysely.selectFrom('access_tokens').select('family_id').limit(1)
        .where('user_id', '=', f.user.id).orderBy('created_at', 'desc').executeTakeFirstOrThrow()).family_id)
      .execute();
    assert.equal(rows.filter((r) => r.rotated_at === null).length, 1, 'one live refresh token');
    assert.equal(await useToken(t, bodies[0].access_token), 200);
    t.clock.advance(31);
    assert.equal((await refresh(t, f, bodies[0].refresh_token)).statusCode, 200);
  });

  it('refuses a refresh token of another client, an unknown one, and a redirect_uri that is not registered', async () => {
    const tokens = await obtainTokens(t, f);
    const { registerApp } = await import('../../src/domain/apps.js');
    const other = await registerApp(t.database.stores.apps, t.clock, f.developer.id, { name: 'Other', redirectUris: [REDIRECT_URI], scopes: ['read_profile'], isPublic: false });
    const stolen = await refresh(t, f, tokens.refresh_token, { client_id: other.app.clientId, client_secret: other.clientSecret! });
    assert.equal(stolen.json().error, 'invalid_grant');
    assert.equal((await refresh(t, f, 'srt_nope')).json().error, 'invalid_grant');
    const badRedirect = await refresh(t, f, tokens.refresh_token, { redirect_uri: `${REDIRECT_URI}/` });
    assert.equal(badRedirect.statusCode, 400);
    assert.equal(badRedirect.json().error, 'access_denied');
    // redirect_uri is optional; sent exactly, it is accepted (docs/oauth.md, Token endpoint).
    const ok = await refresh(t, f, tokens.refresh_token, { redirect_uri: REDIRECT_URI });
    assert.equal(ok.statusCode, 200);
  });

  it('asks for a missing refresh_token only once the client is authenticated; a wrong secret never reads the token', async () => {
    const missing = await tokenRequest(t, { grant_type: 'refresh_token', client_id: f.app.clientId, client_secret: f.secret });
    assert.equal(missing.statusCode, 400);
    assert.equal(missing.json().error, 'invalid_request');
    const unknownClient = await tokenRequest(t, { grant_type: 'refresh_token', client_id: 'nope', client_secret: 'x' });
    assert.equal(unknownClient.statusCode, 401);
    assert.equal(unknownClient.json().error, 'invalid_client');
    const tokens = await obtainTokens(t, f);
    const wrongSecret = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: f.app.clientId, client_secret: 'scs_wrong' });
    assert.equal(wrongSecret.statusCode, 401);
    assert.equal(wrongSecret.json().error, 'invalid_client');
    assert.equal((await refresh(t, f, tokens.refresh_token)).statusCode, 200, 'the token was not spent by the refused request');
  });

  it('may narrow the scope of the new access token, never widen it', async () => {
    const tokens = await obtainTokens(t, f, { scope: 'read_profile read_activity', prompt: 'consent' });
    const wider = await refresh(t, f, tokens.refresh_token, { scope: 'read_profile write_activity' });
    assert.equal(wider.json().error, 'invalid_scope');
    const narrower = await refresh(t, f, tokens.refresh_token, { scope: 'read_activity' });
    assert.equal(narrower.statusCode, 200);
    assert.equal(narrower.json().scope, 'read_activity');
  });

  it('refuses an expired refresh token (REFRESH_TOKEN_TTL)', async () => {
    const tokens = await obtainTokens(t, f);
    t.clock.advance(t.config.refreshTokenTtl);
    assert.equal((await refresh(t, f, tokens.refresh_token)).json().error, 'invalid_grant');
  });
});
