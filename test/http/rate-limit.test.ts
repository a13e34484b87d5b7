import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { TestApp } from '../support/app.js';
import { Browser, createFixture, createOAuthTestApp, signIn, type Fixture } from '../oauth/flow.js';

describe('rate limits while Redis is unreachable', () => {
  let t: TestApp;
  let f: Fixture;
  before(async () => {
    // Nothing listens on port 1: every command to the counter store fails.
    t = await createOAuthTestApp('sqlite', { RATE_LIMIT: 'on', RATE_LIMIT_LOGIN: '2/min', REDIS_URL: 'redis://127.0.0.1:1' });
    f = await createFixture(t);
  });
  after(() => t.close());

  it('let requests through unlimited instead of failing them', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await signIn(new Browser(t.app), f.user.email, 'wrong password')).status);
    assert.deepEqual(statuses, [401, 401, 401, 401]);
    assert.equal((await signIn(new Browser(t.app), f.user.email, f.password)).status, 303, 'a right password still signs in');
  });
});
