import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { bearer, createUser, issueAccessToken } from '../support/tokens.js';

forEachDialect('resource API rate limit', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect, { RATE_LIMIT: 'on', RATE_LIMIT_API: '3/min' });
  });
  after(() => t.close());

  it('answers 429 rate_limited with Retry-After past RATE_LIMIT_API, per grant', async () => {
    const user = await createUser(t);
    const busy = await issueAccessToken(t, user, ['read_profile', 'read_activity']);
    const quiet = await issueAccessToken(t, user, ['read_profile']);
    const call = (token: string, url = '/v1/users/me') => t.app.inject({ method: 'GET', url, headers: bearer(token) });

    for (let i = 0; i < 3; i++) assert.equal((await call(busy.token, i === 1 ? '/v1/users/me/activities/steps' : '/users')).statusCode, 200);
    const limited = await call(busy.token);
    assert.equal(limited.statusCode, 429);
    assert.equal(limited.json().error, 'rate_limited');
    assert.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After says when to come back');

    assert.equal((await call(quiet.token)).statusCode, 200, "another grant's counter is separate");
    assert.equal((await call('sat_not-a-real-token')).statusCode, 401, 'unknown tokens are refused before counting');
  });
});
