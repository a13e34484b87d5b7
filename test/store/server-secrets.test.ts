import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readOrCreateServerSecret } from '../../src/store/server-secrets.js';
import { freePort, startServer } from '../support/cli.js';
import { createTestDatabase, DIALECTS, forEachDialect, type TestDatabase } from '../support/databases.js';

forEachDialect('server secrets', (dialect) => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase(dialect);
  });
  after(() => database.drop());

  it('are made once, by whichever caller comes first, and read back by all', async () => {
    const { kysely } = database.db;
    await kysely.deleteFrom('server_secrets').execute();
    const values = await Promise.all(Array.from({ length: 8 }, () => readOrCreateServerSecret(kysely, 'pre_session_csrf', 1)));
    assert.equal(values[0]!.length, 32);
    for (const value of values) assert.deepEqual(value, values[0]);
    assert.equal((await kysely.selectFrom('server_secrets').selectAll().execute()).length, 1);
    assert.deepEqual(await readOrCreateServerSecret(kysely, 'pre_session_csrf', 2), values[0], 'kept, not made again');
  });
});

// Real processes are slow to start: one dialect, PostgreSQL when there is one (separate connections
// racing for the row; the in-process test above covers both dialects).
const processDialect = DIALECTS.at(-1)!;

describe(`server secrets across processes [${processDialect}]`, () => {
  let database: TestDatabase;
  before(async () => {
    database = await createTestDatabase(processDialect);
  });
  after(() => database.drop());

  it('are shared by server processes that start at once: one signs a CSRF pair, another accepts it', async () => {
    await database.db.kysely.deleteFrom('server_secrets').execute();
    const ports = [await freePort(), await freePort()];
    const servers = await Promise.all(ports.map((port) => startServer(port, { DATABASE_URL: database.url, RATE_LIMIT: 'off' })));
    try {
      const page = await fetch(`http://127.0.0.1:${ports[0]}/login`);
      const cookie = page.headers.getSetCookie()[0]!.split(';')[0]!;
      const token = /name="csrf_token" value="([^"]+)"/.exec(await page.text())![1]!;
      const answer = await fetch(`http://127.0.0.1:${ports[1]}/login`, {
        method: 'POST',
        redirect: 'manual',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf_token: token, email: 'nobody@example.com', password: 'wrong password' }).toString(),
      });
      // 401: the form was accepted and the credentials checked (a refused token is 403).
      assert.equal(answer.status, 401);
    } finally {
      await Promise.all(servers.map((server) => new Promise((resolve) => {
        server.once('exit', resolve);
        server.kill('SIGTERM');
      })));
    }
  });
});
