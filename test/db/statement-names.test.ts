/**
 * A `stride serve` behind PgBouncer in transaction pooling mode WITHOUT
 * DATABASE_TRANSACTION_POOLING: statements prepared by name go missing between server connections,
 * and the server notices, sends them unnamed from then on, and says so once in its log — no
 * request fails meanwhile.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { openDatabase, type Db } from '../../src/db/database.js';
import { registerApp } from '../../src/domain/apps.js';
import { createAccount } from '../../src/domain/users.js';
import { createStores } from '../../src/store/stores.js';
import { freePort, startServer } from '../support/cli.js';
import { pgbouncerUnavailable, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { authorizeUrl } from '../oauth/flow.js';

const REDIRECT = 'https://app.example/callback';

describe('behind PgBouncer without DATABASE_TRANSACTION_POOLING', { skip: pgbouncerUnavailable() ?? false }, () => {
  let bouncer: PgBouncer;
  let direct: Db;
  let server: ChildProcess;
  let origin: string;
  let log = '';

  before(async () => {
    bouncer = await startPgBouncer();
    const port = await freePort();
    server = await startServer(port, { DATABASE_URL: bouncer.url, RATE_LIMIT: 'off', LOG_LEVEL: 'warn' });
    server.stdout!.on('data', (chunk) => (log += chunk));
    server.stderr!.on('data', (chunk) => (log += chunk));
    origin = `http://127.0.0.1:${port}`;
    direct = openDatabase(bouncer.directUrl);
  });
  after(async () => {
    server?.kill('SIGKILL');
    await direct?.close();
    await bouncer?.stop();
  });

  it('answers bursts of authorization requests without a 500, and logs once that it stopped naming statements', async () => {
    const stores = createStores(direct);
    const clock = () => Math.floor(Date.now() / 1000);
    const developer = await createAccount(stores.users, clock, { email: 'dev@pooled.test', password: 'correct horse battery', displayName: 'Dev' });
    const { app } = await registerApp(stores.apps, clock, developer.id, { name: 'Pace', redirectUris: [REDIRECT], scopes: ['read_profile'], isPublic: false });
    const url = `${origin}${authorizeUrl({ response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT, state: 's', scope: 'read_profile' })}`;

    // Each request reads the app by its client id through a statement prepared by name; the
    // server's ten connections share PgBouncer's four, so the names soon land on connections that
    // do not have them (or have them already). How soon depends on how the requests of a burst
    // fall into the event loop's turns: bursts go on until the server has noticed, then five more
    // show that it does not need to again.
    const notices = () => log.split('\n').filter((line) => line.includes('DATABASE_TRANSACTION_POOLING=true'));
    const statuses: number[] = [];
    let burstsSinceNotice = -1;
    for (let burst = 0; burst < 100 && burstsSinceNotice < 5; burst++) {
      const answers = await Promise.all(Array.from({ length: 60 }, () => fetch(url, { redirect: 'manual' })));
      statuses.push(...answers.map((answer) => answer.status));
      await Promise.all(answers.map((answer) => answer.arrayBuffer()));
      if (burstsSinceNotice >= 0 || notices().length > 0) burstsSinceNotice++;
    }
    const counts = Object.fromEntries([...new Set(statuses)].map((status) => [status, statuses.filter((s) => s === status).length]));
    assert.deepEqual(counts, { 302: statuses.length }, 'every request is sent to sign in, none fails');
    assert.equal(notices().length, 1, `one notice in the log after ${statuses.length / 60} bursts:\n${log}`);
    assert.match(notices()[0]!, /"level":40/, 'at warn level');
  });
});
