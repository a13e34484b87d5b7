/**
 * Two server instances on one database, each with its own connection (as separate processes
 * have): a revocation made through one is effective on the next request to the other.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/app.js';
import { openDatabase, type Db } from '../../src/db/database.js';
import { createStores } from '../../src/store/stores.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { bearer, createUser, issueAccessToken } from '../support/tokens.js';

forEachDialect('two instances sharing one database', (dialect) => {
  let first: TestApp;
  let secondDb: Db;
  let second: FastifyInstance;
  before(async () => {
    first = await createTestApp(dialect);
    secondDb = openDatabase(first.database.url);
    second = await buildApp({ config: first.config, stores: createStores(secondDb), clock: first.clock });
    await second.ready();
  });
  after(async () => {
    await second.close();
    await secondDb.close();
    await first.close();
  });

  it('see a revocation made through the other on their next request', async () => {
    const user = await createUser(first);
    const issued = await issueAccessToken(first, user, ['read_profile']);
    const profile = (app: FastifyInstance) => app.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(issued.token) });
    assert.equal((await profile(second)).statusCode, 200);
    assert.equal((await profile(first.app)).statusCode, 200);

    assert.equal(await first.database.stores.grants.revokeForUser(user.id, issued.appId, first.clock()), true);
    const afterRevocation = await profile(second);
    assert.equal(afterRevocation.statusCode, 401);
    assert.equal(afterRevocation.json().error, 'invalid_token');
  });

  it('see a profile change made through the other', async () => {
    const user = await createUser(first);
    const { token } = await issueAccessToken(first, user, ['read_profile', 'write_profile']);
    const put = await first.app.inject({ method: 'PUT', url: '/v1/users/me', headers: bearer(token), payload: { daily_step_goal: 12345 } });
    assert.equal(put.statusCode, 200);
    const read = await second.inject({ method: 'GET', url: '/v1/users/me', headers: bearer(token) });
    assert.equal(read.json().daily_step_goal, 12345);
  });
});
