/**
 * Three real `stride serve` processes through PgBouncer in transaction pooling mode
 * (DATABASE_TRANSACTION_POOLING, docs/deployment.md), with one Redis: they start together on an
 * empty database, and a session, a token, a revocation, a scope change, a rotation and the rate
 * limits are the same whichever process answers.
 */
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { openDatabase, type Db } from '../../src/db/database.js';
import { MIGRATIONS } from '../../src/db/migrate.js';
import { registerApp } from '../../src/domain/apps.js';
import { createAccount } from '../../src/domain/users.js';
import { createStores, type Stores } from '../../src/store/stores.js';
import { freePort, runCli, startServer } from '../support/cli.js';
import { pgbouncerUnavailable, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { createRedisServer, redisServerUnavailable, type RedisServer } from '../support/redis-server.js';
import { authorizeAndAllow, authorizeUrl, Browser, encodeForm, signIn } from '../oauth/flow.js';

const REDIRECT = 'https://app.example/callback';
const PASSWORD = 'correct horse battery';

describe('three processes through PgBouncer (transaction pooling)', { skip: pgbouncerUnavailable() ?? redisServerUnavailable() ?? false }, () => {
  let bouncer: PgBouncer;
  let redis: RedisServer;
  let direct: Db;
  let stores: Stores;
  const servers: ChildProcess[] = [];
  const origins: string[] = [];
  let env: Record<string, string>;

  before(async () => {
    bouncer = await startPgBouncer();
    redis = await createRedisServer();
    env = {
      DATABASE_URL: bouncer.url,
      DATABASE_TRANSACTION_POOLING: 'true',
      REDIS_URL: redis.url,
      RATE_LIMIT: 'on',
      RATE_LIMIT_API: '20/min',
      PUBLIC_URL: 'http://stride.test',
    };
    const ports = await Promise.all([0, 1, 2].map(() => freePort()));
    // All three at once, on an empty database.
    servers.push(...(await Promise.all(ports.map((port) => startServer(port, env)))));
    origins.push(...ports.map((port) => `http://127.0.0.1:${port}`));
    direct = openDatabase(bouncer.directUrl);
    stores = createStores(direct);
  });
  after(async () => {
    for (const server of servers) server.kill('SIGKILL');
    await direct?.close();
    await redis?.stop();
    await bouncer?.stop();
  });

  const token = (origin: string, form: Record<string, string>) =>
    fetch(`${origin}/oauth2/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: encodeForm(form) });
  const profile = (origin: string, accessToken: string) => fetch(`${origin}/v1/users/me`, { headers: { authorization: `Bearer ${accessToken}` } }).then((r) => r.status);

  it('migrated the empty database once, though all three started together', async () => {
    const rows = await direct.kysely.selectFrom('stride_migrations' as never).select('name' as never).execute();
    assert.deepEqual(rows.map((row) => (row as { name: string }).name).sort(), Object.keys(MIGRATIONS).sort());
  });

  it('shares sessions, tokens, rotations, revocations, scope changes and rate limits between the processes', async () => {
    const clock = () => Math.floor(Date.now() / 1000);
    const developer = await createAccount(stores.users, clock, { email: 'dev@pgbouncer.test', password: PASSWORD, displayName: 'Dev' });
    const user = await createAccount(stores.users, clock, { email: 'walker@pgbouncer.test', password: PASSWORD, displayName: 'Walker' });
    const { app, clientSecret } = await registerApp(stores.apps, clock, developer.id, { name: 'Pace', redirectUris: [REDIRECT], scopes: ['read_profile', 'read_activity'], isPublic: false });
    const client = { client_id: app.clientId, client_secret: clientSecret! };

    // Signed in through the first process; the session works on the second.
    const first = new Browser(null, origins[0]);
    assert.equal((await signIn(first, user.email, PASSWORD)).status, 303);
    const second = new Browser(null, origins[1]);
    for (const [name, value] of first.cookies) second.cookies.set(name, value);
    const back = await authorizeAndAllow(second, authorizeUrl({ response_type: 'code', client_id: app.clientId, redirect_uri: REDIRECT, state: 's', scope: 'read_profile read_activity' }));
    const code = back.searchParams.get('code')!;

    // The code exchanged on the third; the token used on each.
    const exchanged = await token(origins[2]!, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, ...client });
    assert.equal(exchanged.status, 200);
    const tokens = (await exchanged.json()) as { access_token: string; refresh_token: string };
    for (const origin of origins) assert.equal(await profile(origin, tokens.access_token), 200);

    // Ten refreshes of one refresh token at once, spread over the three: one successor.
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => token(origins[i % 3]!, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, ...client })));
    assert.deepEqual(answers.map((a) => a.status), Array(10).fill(200));
    const successors = (await Promise.all(answers.map((a) => a.json()))) as Array<{ access_token: string; refresh_token: string }>;
    assert.equal(new Set(successors.map((s) => s.refresh_token)).size, 1, 'every answer names the same successor');
    const live = await direct.kysely.selectFrom('refresh_tokens').select('token_key').where('user_id', '=', user.id).where('rotated_at', 'is', null).execute();
    assert.equal(live.length, 1, 'one chain: one refresh token not yet rotated');

    // A revocation through the first is refused at once by the others.
    const successor = successors[0]!;
    const revoked = await fetch(`${origins[0]}/oauth2/revoke`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: encodeForm({ token: tokens.access_token, ...client }) });
    assert.equal(revoked.status, 200);
    assert.equal(await profile(origins[1]!, tokens.access_token), 401);
    assert.equal(await profile(origins[2]!, tokens.access_token), 401);

    // The API limit (20/min per grant) counts across the processes together: three reads above,
    // seventeen left for the successor, whichever process answers.
    const statuses = [];
    for (let i = 0; i < 30; i++) statuses.push(await profile(origins[i % 3]!, successor.access_token));
    assert.equal(statuses.filter((s) => s === 200).length, 17, statuses.join(','));
    assert.equal(statuses.filter((s) => s === 429).length, 13);

    // A scope change made with the CLI (through PgBouncer too) ends the grant on every process:
    // the token, limited but valid before (429), is refused after (401).
    const changed = await runCli(['apps', 'update', app.clientId, '--scopes', 'read_profile'], env);
    assert.equal(changed.code, 0, changed.stderr);
    for (const origin of origins) assert.equal(await profile(origin, successor.access_token), 401);
  });
});
