import assert from 'node:assert/strict';
import { after, before, it, mock } from 'node:test';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { keyedRateLimit, registerRateLimiting } from '../../src/http/rate-limit.js';

/**
 * The in-process counter store keeps every limit's windows in one map and clears the ended ones
 * when the map is full. A lockout of a long window must outlive that cleanup even when a limit of a
 * shorter window triggers it (100,000 fresh keys of a one-minute limit are cheap to make).
 */
let app: FastifyInstance;
before(async () => {
  mock.timers.enable({ apis: ['Date'], now: 1_800_000_000_000 });
  app = Fastify();
  const rateLimits = { lockout: { max: 1, windowMs: 15 * 60_000 }, flood: { max: 1, windowMs: 60_000 } };
  app.decorate('ctx', { config: { redisUrl: undefined, rateLimits } } as never);
  await registerRateLimiting(app);
  await app.ready();
});
after(async () => {
  await app.close();
  mock.timers.reset();
});

it('keeps a 15-minute lockout when a one-minute limit fills the store and clears it', async () => {
  const lockout = keyedRateLimit(app, { max: 1, windowMs: 15 * 60_000 }, 'lockout')!;
  const flood = keyedRateLimit(app, { max: 1, windowMs: 60_000 }, 'flood')!;
  // The counter reads only the request's route options (for a group id); a request object of a route does.
  const request = () => ({ routeOptions: { config: {} } }) as unknown as FastifyRequest;

  await lockout(request(), 'person@example.com');
  assert.equal((await lockout(request(), 'person@example.com')).exceeded, true, 'the second attempt is beyond the limit');

  // Two minutes later, well inside the 15-minute window: a flood of fresh one-minute keys fills the
  // store, and the next fresh key makes it clear what has ended.
  mock.timers.tick(2 * 60_000);
  for (let i = 0; i <= 100_000; i++) await flood(request(), `address-${i}`);

  const spent = await lockout(request(), 'person@example.com');
  assert.equal(spent.exceeded, true, 'the lockout is still in force');
  assert.ok(spent.retryAfterSeconds > 12 * 60, `about 13 minutes left, not ${spent.retryAfterSeconds} s`);
});
