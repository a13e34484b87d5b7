/**
 * Redis going away while it holds the rate-limit counters (REDIS_URL), on a Redis of the test's
 * own: requests keep being answered — unlimited, as docs/operations.md says — within a bounded
 * time, never a 500 or a crash; once Redis is back the limits apply again, with no restart.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../support/app.js';
import { createRedisServer, redisServerUnavailable, type RedisServer } from '../support/redis-server.js';
import { userWithToken } from '../support/tokens.js';

const skip = redisServerUnavailable();
if (skip) console.log(`# skipping the Redis fault tests: ${skip}`);

const LIMIT = 5;
/** Longest a request may wait for the counter store before it goes through unlimited. */
const BOUND_MS = 3000;

describe('rate limits when Redis goes away', { skip: skip ?? false }, () => {
  let redis: RedisServer;
  let t: TestApp;
  let token: string;

  before(async () => {
    redis = await createRedisServer();
    t = await createTestApp('sqlite', { RATE_LIMIT: 'on', RATE_LIMIT_API: `${LIMIT}/min`, REDIS_URL: redis.url });
    ({ token } = await userWithToken(t));
  });
  after(async () => {
    await t?.close();
    await redis?.stop();
  });

  const get = async () => {
    const started = Date.now();
    const response = await t.app.inject({ method: 'GET', url: '/v1/users/me', headers: { authorization: `Bearer ${token}` } });
    return { status: response.statusCode, ms: Date.now() - started, body: response.body };
  };

  /** Sends requests until one is refused with 429 (the limit applies), at most `max` of them. */
  const untilLimited = async (max: number, pauseMs = 0) => {
    const statuses: number[] = [];
    while (statuses.length < max) {
      const { status } = await get();
      statuses.push(status);
      if (status === 429) break;
      if (pauseMs) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
    return statuses;
  };

  it('limits through Redis, goes through unlimited while Redis is down or frozen, and limits again once it is back', async () => {
    assert.deepEqual(await untilLimited(LIMIT + 1), [...Array(LIMIT).fill(200), 429]);

    await redis.stop();
    // Over the limit, and still answered: the store's failures skip the limit.
    for (let i = 0; i < 3 * LIMIT; i++) {
      const answer = await get();
      assert.equal(answer.status, 200, answer.body);
      assert.ok(answer.ms < BOUND_MS, `answered in ${answer.ms} ms`);
    }

    // Redis restarts empty: the counters begin again, and the limit holds once the connection is back.
    await redis.start();
    const statuses = await untilLimited(200, 50);
    assert.equal(statuses.at(-1), 429, `no 429 after Redis came back: ${statuses.join(' ')}`);
    assert.ok(statuses.every((status) => status === 200 || status === 429), statuses.join(' '));

    // Frozen (the connection open, nothing answering): a request waits a bounded time, then goes through.
    redis.freeze();
    try {
      for (let i = 0; i < 3; i++) {
        const answer = await get();
        assert.equal(answer.status, 200, answer.body);
        assert.ok(answer.ms < BOUND_MS, `answered in ${answer.ms} ms`);
      }
    } finally {
      redis.thaw();
    }
    const afterThaw = await get();
    assert.equal(afterThaw.status, 429, 'the limit applies again once Redis answers');
  });
});
