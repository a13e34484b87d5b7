/**
 * With REDIS_URL the sign-in counters (per address, and per email) live in Redis, shared by every
 * server process: two app instances on one Redis spend one budget. Skipped when no Redis answers (TEST_REDIS_URL, default
 * redis://127.0.0.1:6379). One dialect is enough: the counter does not touch the database.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { TestApp } from '../support/app.js';
import { Browser, createFixture, createOAuthTestApp, formFields, type Fixture } from '../oauth/flow.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { SHARED_REDIS_URL, sharedRedisUnavailable } from '../support/redis-server.js';

cheapPasswordHashing();

const REDIS_URL = SHARED_REDIS_URL;
const unavailable = await sharedRedisUnavailable();

/** A sign-in through a trusted proxy (TRUST_PROXY=127.0.0.1) for the client `forwardedFor`. */
async function signInFrom(t: TestApp, email: string, password: string, forwardedFor: string) {
  const browser = new Browser(t.app);
  const fields = formFields((await browser.get('/login')).body, '/login');
  return browser.post('/login', { ...fields, email, password }, { 'x-forwarded-for': forwardedFor });
}

describe('sign-in rate limit shared through Redis', { skip: unavailable ?? false }, () => {
  let first: TestApp;
  let second: TestApp;
  let f: Fixture;
  before(async () => {
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys('stride-rate-limit:login*');
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    const env = { RATE_LIMIT: 'on', RATE_LIMIT_LOGIN: '5/min', RATE_LIMIT_LOGIN_ACCOUNT: '3/min', TRUST_PROXY: '127.0.0.1', REDIS_URL };
    first = await createOAuthTestApp('sqlite', env);
    second = await createOAuthTestApp('sqlite', env);
    f = await createFixture(first);
  });
  after(async () => {
    await second?.close();
    await first?.close();
  });

  it('two processes share one budget, sign-up and sign-in alike', async () => {
    // A client address of this run only, so runs sharing the Redis server do not meet.
    const client = `2001:db8::${randomBytes(4).toString('hex').replace(/(....)(....)/, '$1:$2')}`;
    const signUpPage = new Browser(first.app);
    const signUpFields = formFields((await signUpPage.get('/signup')).body, '/signup');
    const signUp = await signUpPage.post('/signup', { ...signUpFields, email: 'not an email', password: 'x' }, { 'x-forwarded-for': client });
    assert.notEqual(signUp.status, 429);
    const statuses: number[] = [];
    for (const [i, t] of [second, first, second, first, second].entries()) {
      statuses.push((await signInFrom(t, `other-${i}@example.com`, 'wrong password', client)).status);
    }
    assert.deepEqual(statuses, [401, 401, 401, 401, 429], 'the sign-up spent one of the five');
  });

  it('two processes share one per-account budget, whatever the addresses', async () => {
    const statuses: number[] = [];
    for (const [i, t] of [first, second, first, second].entries()) {
      statuses.push((await signInFrom(t, f.user.email, 'wrong password', `203.0.113.${50 + i}`)).status);
    }
    assert.deepEqual(statuses, [401, 401, 401, 429]);
  });
});
