/**
 * With REDIS_URL the sign-in counter lives in Redis, shared by every server process: two app
 * instances on one Redis spend one budget. Skipped when no Redis answers (TEST_REDIS_URL, default
 * redis://127.0.0.1:6379). One dialect is enough: the counter does not touch the database.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import type { TestApp } from '../support/app.js';
import { Browser, createFixture, createOAuthTestApp, signIn, type Fixture } from '../oauth/flow.js';

const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

async function redisAvailable(): Promise<boolean> {
  const client = new Redis(REDIS_URL, { lazyConnect: true, connectTimeout: 500, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}

const available = await redisAvailable();

describe('sign-in rate limit shared through Redis', { skip: available ? false : `no Redis at ${REDIS_URL}` }, () => {
  let first: TestApp;
  let second: TestApp;
  let f: Fixture;
  before(async () => {
    const redis = new Redis(REDIS_URL);
    const keys = await redis.keys('stride-rate-limit:login*');
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
    const env = { RATE_LIMIT: 'on', RATE_LIMIT_LOGIN: '4/min', REDIS_URL };
    first = await createOAuthTestApp('sqlite', env);
    second = await createOAuthTestApp('sqlite', env);
    f = await createFixture(first);
  });
  after(async () => {
    await second?.close();
    await first?.close();
  });

  it('two processes share one budget', async () => {
    const statuses: number[] = [];
    for (const t of [first, second, first, second, first, second]) {
      statuses.push((await signIn(new Browser(t.app), f.user.email, 'wrong password')).status);
    }
    assert.deepEqual(statuses, [401, 401, 401, 401, 429, 429]);
  });
});
