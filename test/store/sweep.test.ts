import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { sweepExpired } from '../../src/store/sweep.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { createUser, issueAccessToken } from '../support/tokens.js';

forEachDialect('sweeping expired rows', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect);
  });
  after(() => t.close());

  it('deletes expired codes, tokens and sessions and keeps live ones', async () => {
    const db = t.database.db.kysely;
    const now = t.clock();
    const user = await createUser(t);
    const expired = await issueAccessToken(t, user, ['read_profile'], 10);
    const live = await issueAccessToken(t, user, ['read_profile'], 3600);
    const refresh = (hash: string, grantId: string, appId: string, expiresAt: number) => ({
      token_key: hash, family_id: 'f', grant_id: grantId, app_id: appId, user_id: user.id, scope: 'read_profile',
      expires_at: expiresAt, created_at: now, rotated_at: null, replay_response: null,
    });
    await db.insertInto('refresh_tokens').values([
      refresh('old-refresh', expired.grantId, expired.appId, now + 10),
      refresh('live-refresh', live.grantId, live.appId, now + 86400),
    ]).execute();
    const code = (hash: string, expiresAt: number) => ({
      code_hash: hash, app_id: live.appId, user_id: user.id, grant_id: live.grantId, redirect_uri: 'https://app.example.test/callback',
      scope: 'read_profile', code_challenge: null, code_challenge_method: null, expires_at: expiresAt, consumed_at: null, created_at: now,
    });
    await db.insertInto('authorization_codes').values([code('old-code', now + 10), code('live-code', now + 600)]).execute();
    await db.insertInto('sessions').values([
      { id_hash: 'old-session', user_id: user.id, csrf_secret: 'x', created_at: now, expires_at: now + 10 },
      { id_hash: 'live-session', user_id: user.id, csrf_secret: 'y', created_at: now, expires_at: now + 86400 },
    ]).execute();

    assert.deepEqual(await sweepExpired(db, now), { authorizationCodes: 0, accessTokens: 0, refreshTokens: 0, sessions: 0 });
    assert.deepEqual(await sweepExpired(db, now + 11), { authorizationCodes: 1, accessTokens: 1, refreshTokens: 1, sessions: 1 });
    assert.deepEqual((await db.selectFrom('authorization_codes').select('code_hash').execute()).map((r) => r.code_hash), ['live-code']);
    assert.deepEqual((await db.selectFrom('refresh_tokens').select('token_key').execute()).map((r) => r.token_key), ['live-refresh']);
    assert.deepEqual((await db.selectFrom('sessions').select('id_hash').execute()).map((r) => r.id_hash), ['live-session']);
    assert.equal((await db.selectFrom('access_tokens').select('token_key').execute()).length, 1);
  });
});
