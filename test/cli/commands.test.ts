/**
 * The commands of `stride` (src/cli/commands.ts), run in this process as `stride ARGS` with their
 * exit code, stdout and stderr; test/stride.test.ts runs the installed command itself.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { verifyPassword } from '../../src/security/passwords.js';
import { hashCredential } from '../../src/security/secrets.js';
import { findAppByClientId } from '../../src/store/apps.js';
import { runCliInProcess, expectCliFailure } from '../support/cli.js';
import { serveDatabase } from '../support/app.js';
import { insertGrant } from '../support/tokens.js';
import { createTestDatabase, forEachDialect, type TestDatabase } from '../support/databases.js';
import { minutesOfDays } from '../support/series-days.js';
import { eventRows } from '../support/events.js';

const files = mkdtempSync(join(tmpdir(), 'stride-cli-'));
after(() => rmSync(files, { recursive: true, force: true }));
function file(name: string, text: string): string {
  const path = join(files, name);
  writeFileSync(path, text);
  return path;
}

forEachDialect('stride CLI', (dialect) => {
  let database: TestDatabase;
  let cli: (...args: string[]) => ReturnType<typeof runCliInProcess>;
  before(async () => {
    database = await createTestDatabase(dialect);
    cli = (...args) => runCliInProcess(args, { DATABASE_URL: database.url, PUBLIC_URL: 'http://localhost:4321' });
  });
  after(() => database.drop());

  const expectFailure = (args: string[], pattern: RegExp) => expectCliFailure(cli, args, pattern);

  it('creates a user and refuses a duplicate email in any letter case', async () => {
    const run = await cli('users', 'create', '--email', 'Dev@Example.com', '--password', 'correct horse', '--name', 'Dev', '--json');
    assert.equal(run.code, 0, run.stderr);
    const user = JSON.parse(run.stdout);
    assert.equal(user.email, 'dev@example.com');
    assert.equal(user.display_name, 'Dev');
    const stored = await database.db.kysely.selectFrom('users').selectAll().where('id', '=', user.id).executeTakeFirstOrThrow();
    assert.match(stored.password_hash, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    await expectFailure(['users', 'create', '--email', 'dev@EXAMPLE.com', '--password', 'another pass'], /^stride: an account with email dev@example.com already exists$/m);
  });

  it('reads the password from standard input with --password-stdin, out of the process list and the shell history', async () => {
    const fromStdin = (args: string[], stdin: string) => runCliInProcess(args, { DATABASE_URL: database.url, PUBLIC_URL: 'http://localhost:4321' }, stdin);
    const run = await fromStdin(['users', 'create', '--email', 'quiet@example.com', '--password-stdin', '--json'], 'a piped password\n');
    assert.equal(run.code, 0, run.stderr);
    const { id } = JSON.parse(run.stdout) as { id: string };
    assert.equal(await verifyPassword((await database.stores.users.findById(id))!.password_hash, 'a piped password'), true, 'the line, without its newline');
    assert.equal((await fromStdin(['users', 'set-password', '--email', 'quiet@example.com', '--password-stdin'], 'another password\r\nignored')).code, 0);
    assert.equal(await verifyPassword((await database.stores.users.findById(id))!.password_hash, 'another password'), true);
    for (const [args, stdin, reason] of [
      [['--password-stdin'], '', /^stride: --password-stdin read no password from standard input$/m],
      [['--password-stdin', '--password', 'a third password'], 'a fourth password\n', /^stride: give --password or --password-stdin, not both$/m],
    ] as const) {
      const refused = await fromStdin(['users', 'set-password', '--email', 'quiet@example.com', ...args], stdin);
      assert.equal(refused.code, 1);
      assert.match(refused.stderr, reason);
    }
    assert.equal(await verifyPassword((await database.stores.users.findById(id))!.password_hash, 'another password'), true, 'a refused change changes nothing');
  });

  it('refuses a bad email, a short password and missing options', async () => {
    await expectFailure(['users', 'create', '--email', 'nope', '--password', 'long enough'], /email/);
    await expectFailure(['users', 'create', '--email', 'x@example.com', '--password', 'short'], /at least 8/);
    await expectFailure(['users', 'create', '--email', 'x@example.com'], /--password is required/);
  });

  it('sets a new password for a person who cannot sign in, ending their sessions', async () => {
    const created = await cli('users', 'create', '--email', 'forgetful@example.com', '--password', 'the old password', '--json');
    const { id } = JSON.parse(created.stdout) as { id: string };
    const now = Math.floor(Date.now() / 1000);
    for (const idHash of ['phone', 'laptop']) {
      await database.stores.sessions.insert({ id_hash: idHash, user_id: id, csrf_secret: 'x', created_at: now, expires_at: now + 3600 });
    }

    const run = await cli('users', 'set-password', '--email', ' Forgetful@Example.com ', '--password', 'a new password', '--json');
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { id, email: 'forgetful@example.com' });
    const stored = await database.stores.users.findById(id);
    assert.equal(await verifyPassword(stored!.password_hash, 'a new password'), true);
    assert.equal(await verifyPassword(stored!.password_hash, 'the old password'), false);
    assert.deepEqual(await database.stores.sessions.listLive(id, now), []);

    await expectFailure(['users', 'set-password', '--email', 'nobody@example.com', '--password', 'a new password'], /^stride: no user with email nobody@example.com$/m);
    await expectFailure(['users', 'set-password', '--email', 'forgetful@example.com', '--password', 'short'], /at least 8/);
    assert.equal(await verifyPassword((await database.stores.users.findById(id))!.password_hash, 'a new password'), true, 'a refused change changes nothing');
  });

  let clientId = '';
  it('creates a confidential app and shows its secret once, storing only a hash', async () => {
    const run = await cli('apps', 'create', '--owner', 'dev@example.com', '--name', 'Step Counter',
      '--redirect-uri', 'https://app.example.com/callback', '--redirect-uri', 'http://127.0.0.1:8080/cb',
      '--scopes', 'read_profile,read_activity', '--json');
    assert.equal(run.code, 0, run.stderr);
    const app = JSON.parse(run.stdout);
    clientId = app.client_id;
    assert.equal(app.type, 'confidential');
    assert.deepEqual(app.scopes, ['read_profile', 'read_activity']);
    assert.deepEqual(app.redirect_uris, ['https://app.example.com/callback', 'http://127.0.0.1:8080/cb']);
    assert.match(app.client_secret, /^scs_[A-Za-z0-9_-]{43}$/);
    const stored = await findAppByClientId(database.db.kysely, clientId);
    assert.equal(stored?.clientSecretHash, hashCredential(app.client_secret));
    const text = await cli('apps', 'list', '--owner', 'dev@example.com');
    assert.ok(text.stdout.includes(clientId));
    assert.ok(!text.stdout.includes(app.client_secret), 'the secret is never shown again');
  });

  it('creates a public app without a secret', async () => {
    const run = await cli('apps', 'create', '--owner', 'dev@example.com', '--name', 'Phone',
      '--redirect-uri', 'com.example.phone:/oauth', '--scopes', 'read_activity', '--public', '--json');
    assert.equal(run.code, 0, run.stderr);
    const app = JSON.parse(run.stdout);
    assert.equal(app.type, 'public');
    assert.equal(app.client_secret, null);
    assert.deepEqual(app.grant_types, ['authorization_code', 'refresh_token'], 'what every app could use before the setting');
  });

  it('sets the grant types an app may use, device_code standing for the URN of RFC 8628', async () => {
    const created = await cli('apps', 'create', '--owner', 'dev@example.com', '--name', 'Scale',
      '--redirect-uri', 'https://scale.example/cb', '--scopes', 'read_activity', '--public', '--grant-types', 'device_code,refresh_token', '--json');
    assert.equal(created.code, 0, created.stderr);
    const { client_id: clientId, grant_types: grantTypes } = JSON.parse(created.stdout);
    assert.deepEqual(grantTypes, ['refresh_token', 'urn:ietf:params:oauth:grant-type:device_code']);
    const updated = await cli('apps', 'update', clientId, '--grant-types', 'authorization_code refresh_token device_code', '--json');
    assert.equal(updated.code, 0, updated.stderr);
    assert.deepEqual(JSON.parse(updated.stdout).grant_types, ['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:device_code']);
    await expectFailure(['apps', 'update', clientId, '--grant-types', 'password'], /unknown grant type "password"/);
    // The owner's app count matters to a later test.
    assert.equal((await cli('apps', 'delete', clientId)).code, 0);
  });

  it('creates an app that requires DPoP, and changes the setting with apps update', async () => {
    const run = await cli('apps', 'create', '--owner', 'dev@example.com', '--name', 'Bound Phone',
      '--redirect-uri', 'com.example.bound:/oauth', '--scopes', 'read_activity', '--public', '--require-dpop', '--json');
    assert.equal(run.code, 0, run.stderr);
    const app = JSON.parse(run.stdout);
    assert.equal(app.require_dpop, true);
    assert.equal((await findAppByClientId(database.db.kysely, app.client_id))!.requireDpop, true);
    const off = await cli('apps', 'update', app.client_id, '--no-require-dpop', '--json');
    assert.equal(off.code, 0, off.stderr);
    assert.equal(JSON.parse(off.stdout).require_dpop, false);
    assert.equal((await findAppByClientId(database.db.kysely, app.client_id))!.requireDpop, false);
    const on = await cli('apps', 'update', app.client_id, '--require-dpop', '--json');
    assert.equal(JSON.parse(on.stdout).require_dpop, true);
    await cli('apps', 'delete', app.client_id);
  });

  it('sets "require PAR" (RFC 9126) on create and update', async () => {
    const run = await cli('apps', 'create', '--owner', 'dev@example.com', '--name', 'Strict',
      '--redirect-uri', 'https://strict.example/cb', '--scopes', 'read_profile', '--require-par', 'yes', '--json');
    assert.equal(run.code, 0, run.stderr);
    const app = JSON.parse(run.stdout);
    assert.equal(app.require_par, true);
    assert.equal((await findAppByClientId(database.db.kysely, app.client_id))!.requirePar, true);
    const off = await cli('apps', 'update', app.client_id, '--require-par', 'no', '--json');
    assert.equal(off.code, 0, off.stderr);
    assert.equal(JSON.parse(off.stdout).require_par, false);
    assert.equal((await findAppByClientId(database.db.kysely, app.client_id))!.requirePar, false);
    await expectFailure(['apps', 'update', app.client_id, '--require-par', 'maybe'], /--require-par must be yes or no/);
    assert.equal((await cli('apps', 'delete', app.client_id)).code, 0);
  });

  it('makes initial access tokens for registration (RFC 7591), stored only as their hash', async () => {
    const run = await cli('registration-token', 'create', '--expires-in', '3600', '--json');
    assert.equal(run.code, 0, run.stderr);
    const made = JSON.parse(run.stdout);
    assert.match(made.initial_access_token, /^sia_/);
    const row = await database.db.kysely.selectFrom('registration_tokens').selectAll().where('token_hash', '=', hashCredential(made.initial_access_token)).executeTakeFirstOrThrow();
    assert.equal(Number(row.expires_at), made.expires_at);
    assert.ok(Math.abs(made.expires_at - 3600 - Date.now() / 1000) < 60);
    const forever = await cli('registration-token', 'create');
    assert.equal(forever.code, 0, forever.stderr);
    assert.match(forever.stdout, /does not expire/);
    assert.match(forever.stdout, /REGISTRATION is off/);
    await expectFailure(['registration-token', 'create', '--expires-in', 'soon'], /--expires-in must be a whole number of seconds/);
  });

  it('refuses bad redirect URIs, unknown scopes and unknown owners', async () => {
    const base = ['apps', 'create', '--owner', 'dev@example.com', '--name', 'Bad', '--scopes', 'read_profile'];
    await expectFailure([...base, '--redirect-uri', 'http://evil.example.com/cb'], /must use https/);
    await expectFailure([...base, '--redirect-uri', 'https://app.example.com/cb#frag'], /fragment/);
    await expectFailure([...base, '--redirect-uri', 'javascript:alert(1)'], /not allowed/);
    await expectFailure([...base, '--redirect-uri', '/relative'], /not an absolute URL/);
    await expectFailure(['apps', 'create', '--owner', 'dev@example.com', '--name', 'Bad', '--redirect-uri', 'https://a.example/cb', '--scopes', 'read_profile,fly'], /unknown scope "fly"/);
    await expectFailure(['apps', 'create', '--owner', 'ghost@example.com', '--name', 'Bad', '--redirect-uri', 'https://a.example/cb', '--scopes', 'read_profile'], /no user with email ghost@example.com/);
  });

  it('refuses app and developer names that read as Stride: apps create and update, users create', async () => {
    const create = ['apps', 'create', '--owner', 'dev@example.com', '--redirect-uri', 'https://a.example/cb', '--scopes', 'read_profile'];
    await expectFailure([...create, '--name', 'Stride'], /^stride: name must not read as "Stride", the name of this service/m);
    await expectFailure([...create, '--name', 'The Stride Team'], /must not read as "Stride"/);
    await expectFailure(['apps', 'update', clientId, '--name', 'Ｓｔｒｉｄｅ'], /must not read as "Stride"/);
    await expectFailure(['users', 'create', '--email', 'impostor@example.com', '--password', 'long enough', '--name', 'Stride Support'], /^stride: display_name must not read as "Stride"/m);
    // Without --name the email's first part would be the name.
    await expectFailure(['users', 'create', '--email', 'stride@example.com', '--password', 'long enough'], /^stride: display_name is needed: the email's first part, "stride", reads as "Stride"/m);
    assert.equal(await database.stores.users.findByEmail('impostor@example.com'), undefined);
    assert.equal(await database.stores.users.findByEmail('stride@example.com'), undefined);
    const named = await cli('users', 'create', '--email', 'stride@example.com', '--password', 'long enough', '--name', 'Sam', '--json');
    assert.equal(named.code, 0, named.stderr);
  });

  it('updates scopes and redirect URIs, and rotates the secret', async () => {
    const run = await cli('apps', 'update', clientId, '--scopes', 'read_profile', '--redirect-uri', 'https://app.example.com/callback/', '--json');
    assert.equal(run.code, 0, run.stderr);
    const app = JSON.parse(run.stdout);
    assert.deepEqual(app.scopes, ['read_profile']);
    assert.deepEqual(app.redirect_uris, ['https://app.example.com/callback/']);
    assert.equal(app.grants_revoked, 0);
    await expectFailure(['apps', 'update', clientId, '--scopes', 'teleport'], /unknown scope "teleport"/);
    await expectFailure(['apps', 'update', 'no-such-client', '--scopes', 'read_profile'], /no app with client id no-such-client/);

    const before = (await findAppByClientId(database.db.kysely, clientId))!.clientSecretHash;
    const rotated = await cli('apps', 'rotate-secret', clientId, '--json');
    assert.equal(rotated.code, 0, rotated.stderr);
    const { client_secret: secret } = JSON.parse(rotated.stdout);
    const after = (await findAppByClientId(database.db.kysely, clientId))!.clientSecretHash;
    assert.notEqual(after, before);
    assert.equal(after, hashCredential(secret));
  });

  it('imports steps from CSV and JSON lines', async () => {
    await cli('users', 'create', '--email', 'walker@example.com', '--password', 'walk walk walk');
    const csv = file('ok.csv', 'start_time,value\n1699999980,10\n1700000040,20\n\n# a comment\n1700000100,30\n');
    const run = await cli('steps', 'import', '--user', 'walker@example.com', csv, '--json');
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { imported: 3, user: 'walker@example.com' });
    const jsonl = file('ok.jsonl', '{"start_time":1700000040,"value":25}\n{"start_time":1700003580,"value":5}\n');
    assert.equal((await cli('steps', 'import', '--user', 'walker@example.com', jsonl)).code, 0);
    const rows = minutesOfDays(await database.db.kysely.selectFrom('series_days').select(['day_start', 'minutes']).execute());
    assert.deepEqual(rows.map((r) => [Number(r.minute_start), Number(r.value)]), [
      [1699999980, 10], [1700000040, 25], [1700000100, 30], [1700003580, 5],
    ]);
  });

  it('imports nothing from a file with a bad line, and names the line', async () => {
    const countBefore = minutesOfDays(await database.db.kysely.selectFrom('series_days').select(['day_start', 'minutes']).execute()).length;
    const bad = file('bad.csv', 'start_time,value\n1700100000,10\n1700100060,20\n1700100090,30\n');
    await expectFailure(['steps', 'import', '--user', 'walker@example.com', bad], /line 4: start_time must be a multiple of 60.*nothing was imported/);
    const negative = file('neg.csv', '1700100000,-3\n');
    await expectFailure(['steps', 'import', '--user', 'walker@example.com', negative], /line 1: value must be an integer from 0 to 1000/);
    const garbage = file('garbage.jsonl', '{"start_time":1700100000,"value":1}\n{oops\n');
    await expectFailure(['steps', 'import', '--user', 'walker@example.com', garbage], /line 2: is not valid JSON/);
    await expectFailure(['steps', 'import', '--user', 'walker@example.com', join(files, 'missing.csv')], /ENOENT|no such file/);
    const countAfter = minutesOfDays(await database.db.kysely.selectFrom('series_days').select(['day_start', 'minutes']).execute()).length;
    assert.equal(countAfter, countBefore);
  });

  it('prints demo credentials and a working authorization URL', async () => {
    // demo points at the server it finds at PUBLIC_URL (test/cli/demo.test.ts refuses the others).
    const server = await serveDatabase(database);
    try {
      const demoCli = () => runCliInProcess(['demo', '--json'], { DATABASE_URL: database.url, PUBLIC_URL: server.url });
      const run = await demoCli();
      assert.equal(run.code, 0, run.stderr);
      const demo = JSON.parse(run.stdout);
      const url = new URL(demo.authorization_url);
      assert.equal(url.origin + url.pathname, `${server.url}/oauth2/authorize`);
      assert.equal(url.searchParams.get('client_id'), demo.app.client_id);
      assert.equal(url.searchParams.get('redirect_uri'), demo.app.redirect_uri);
      assert.equal(url.searchParams.get('response_type'), 'code');
      const app = await findAppByClientId(database.db.kysely, demo.app.client_id);
      assert.deepEqual(app?.redirectUris, [demo.app.redirect_uri]);
      assert.equal(app?.clientSecretHash, hashCredential(demo.app.client_secret));
      assert.ok(demo.user.step_samples > 1000, 'the demo user has 90 days of steps');
      const again = JSON.parse((await demoCli()).stdout);
      assert.equal(again.app.client_id, demo.app.client_id, 'a second run reuses the demo app');
    } finally {
      await server.close();
    }
  });

  it('manages webhook endpoints: add (secret once), list, update, rotate, delete; bad input fails', async () => {
    const added = await cli('webhooks', 'add', clientId, '--url', 'https://hooks.example.com/stride', '--events', 'steps.updated,grant.revoked', '--json');
    assert.equal(added.code, 0, added.stderr);
    const endpoint = JSON.parse(added.stdout);
    assert.match(endpoint.secret, /^whsec_/);
    assert.equal(endpoint.state, 'unverified');
    const listed = JSON.parse((await cli('webhooks', 'list', clientId, '--json')).stdout);
    assert.deepEqual(listed.map((e: { id: string }) => e.id), [endpoint.id]);
    assert.equal(listed[0].secret, undefined);
    const paused = JSON.parse((await cli('webhooks', 'update', endpoint.id, '--paused', '--events', 'profile.updated', '--json')).stdout);
    assert.deepEqual([paused.state, paused.events], ['paused', ['profile.updated']]);
    const rotated = JSON.parse((await cli('webhooks', 'rotate-secret', endpoint.id, '--json')).stdout);
    assert.notEqual(rotated.secret, endpoint.secret);
    await expectFailure(['webhooks', 'add', clientId, '--url', 'http://hooks.example.com/x', '--events', 'steps.updated'], /https/);
    await expectFailure(['webhooks', 'add', clientId, '--url', 'https://192.168.1.9/x', '--events', 'steps.updated'], /public address/);
    await expectFailure(['webhooks', 'add', clientId, '--url', 'https://hooks.example.com/x', '--events', 'steps.removed'], /unknown event type/);
    await expectFailure(['webhooks', 'add', 'no-such-client', '--url', 'https://hooks.example.com/x', '--events', 'steps.updated'], /no app/);
    await expectFailure(['webhooks', 'update', endpoint.id, '--paused', '--active'], /not both/);
    await expectFailure(['webhooks', 'update', 'we_missing', '--active'], /no webhook endpoint/);
    assert.equal(JSON.parse((await cli('webhooks', 'list', clientId, '--json')).stdout).length, 1, 'the refused commands added nothing');
    assert.equal((await cli('webhooks', 'delete', endpoint.id)).code, 0);
    await expectFailure(['webhooks', 'delete', endpoint.id], /no webhook endpoint/);
  });

  it('deletes an account with its data, telling the apps it allowed, but not one that owns apps', async () => {
    await expectFailure(['users', 'delete', '--email', 'dev@example.com'], /^stride: dev@example.com owns 2 apps: delete them first/m);

    const created = await cli('users', 'create', '--email', 'leaver@example.com', '--password', 'long enough', '--json');
    const { id } = JSON.parse(created.stdout) as { id: string };
    const app = await findAppByClientId(database.db.kysely, clientId);
    await insertGrant(database.db.kysely, { userId: id, appId: app!.id, scope: 'read_profile' }, Math.floor(Date.now() / 1000));

    const run = await cli('users', 'delete', '--email', 'Leaver@Example.com', '--json');
    assert.equal(run.code, 0, run.stderr);
    assert.deepEqual(JSON.parse(run.stdout), { id, email: 'leaver@example.com', deleted: true });
    assert.equal(await database.stores.users.findById(id), undefined);
    const db = database.db.kysely;
    assert.deepEqual(await db.selectFrom('grants').select('id').where('user_id', '=', id).execute(), []);
    const told = await eventRows(db, { userId: id, type: 'grant.revoked' });
    assert.deepEqual(told.map((event) => JSON.parse(event.data).reason), ['account_deleted']);
    await expectFailure(['users', 'delete', '--email', 'leaver@example.com'], /^stride: no user with email leaver@example.com$/m);
  });

  it('deletes an app', async () => {
    const run = await cli('apps', 'delete', clientId);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(await findAppByClientId(database.db.kysely, clientId), undefined);
  });
});
