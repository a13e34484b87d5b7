/**
 * Which errors are "the database is away for now" (a 503) and which are not (a bug or a bad
 * request: never hidden behind a 503), on errors the real drivers throw; and a PostgreSQL that
 * accepts connections but never answers, which must cost a request the pool's connect timeout,
 * not forever.
 */
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { createStores } from '../../src/store/stores.js';
import { isDatabaseUnavailable } from '../../src/db/unavailable.js';
import { newTokenPair } from '../../src/security/secrets.js';
import { freePort } from '../support/cli.js';
import { createTestDatabase, forEachDialect } from '../support/databases.js';

forEachDialect('isDatabaseUnavailable', (dialect) => {
  it('is false for a constraint violation and a syntax error (bugs and conflicts stay what they are)', async () => {
    const database = await createTestDatabase(dialect);
    try {
      const { kysely } = database.db;
      const row = { id: 'u1', email: 'same@example.test', password_hash: 'x', display_name: 'A', timezone: 'UTC', daily_step_goal: 1, stride_length_cm: null, created_at: 0, updated_at: 0 };
      await kysely.insertInto('users').values(row).execute();
      const duplicate = await kysely.insertInto('users').values(row).execute().then(() => null, (error: unknown) => error);
      assert.ok(duplicate, 'the duplicate insert failed');
      assert.equal(isDatabaseUnavailable(duplicate), false);
      const syntax = await sql`selec 1`.execute(kysely).then(() => null, (error: unknown) => error);
      assert.ok(syntax, 'the bad statement failed');
      assert.equal(isDatabaseUnavailable(syntax), false);
    } finally {
      await database.drop();
    }
  });
});

describe('isDatabaseUnavailable on connection failures', () => {
  it('is true for a refused connection (nothing listening)', async () => {
    const db = openDatabase(`postgres://postgres@127.0.0.1:${await freePort()}/none`, { connectTimeoutMs: 2000 });
    try {
      const error = await db.pool!.query('select 1').then(() => null, (e: unknown) => e);
      assert.ok(error);
      assert.equal(isDatabaseUnavailable(error), true, String(error));
    } finally {
      await db.close();
    }
  });

  it('is false for an error that is not the database’s', () => {
    assert.equal(isDatabaseUnavailable(new TypeError("Cannot read properties of undefined (reading 'id')")), false);
    assert.equal(isDatabaseUnavailable(undefined), false);
  });
});

describe('a PostgreSQL that accepts connections and never answers', () => {
  let silent: Server;
  let port: number;
  const sockets: Socket[] = [];
  before(async () => {
    port = await freePort();
    silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
  });
  after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  it('answers 503 temporarily_unavailable with Retry-After after the connect timeout, and /readyz 503', async () => {
    const databaseUrl = `postgres://postgres@127.0.0.1:${port}/stride`;
    const db = openDatabase(databaseUrl, { connectTimeoutMs: 300 });
    const config = loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT: 'off', PUBLIC_URL: 'http://stride.test', DATABASE_URL: databaseUrl });
    const app = await buildApp({ config, stores: createStores(db), clock: () => Math.floor(Date.now() / 1000) });
    try {
      for (const request of [
        { method: 'GET' as const, url: '/v1/users/me', headers: { authorization: `Bearer ${newTokenPair().accessToken}` } },
        { method: 'GET' as const, url: '/readyz', headers: {} },
      ]) {
        const started = Date.now();
        const response = await app.inject(request);
        const took = Date.now() - started;
        assert.equal(response.statusCode, 503, response.body);
        assert.equal(response.json().error, 'temporarily_unavailable');
        assert.match(String(response.headers['retry-after']), /^\d+$/);
        assert.ok(took < 2000, `${request.url} answered after ${took} ms`);
      }
    } finally {
      await app.close();
      await db.close();
    }
  });
});
