/**
 * `stride apps fitbit-subscriber` (docs/migrating-from-fitbit.md, "Subscriptions"): setting an
 * app's subscriber with its client secret from standard input or a new one, showing it with its
 * verification code, verifying it again and removing it.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { unsealClientSecret } from '../../src/domain/sealed-client-secrets.js';
import { hashCredential } from '../../src/security/secrets.js';
import { expectCliFailure, runCliInProcess } from '../support/cli.js';
import { createTestDatabase, forEachDialect, type TestDatabase } from '../support/databases.js';

forEachDialect('stride apps fitbit-subscriber', (dialect) => {
  let database: TestDatabase;
  let env: Record<string, string>;
  const cli = (args: string[], stdin = '') => runCliInProcess(args, env, stdin);
  before(async () => {
    database = await createTestDatabase(dialect);
    env = { DATABASE_URL: database.url, PUBLIC_URL: 'http://localhost:4321' };
  });
  after(() => database.drop());

  async function newApp(): Promise<{ clientId: string; secret: string; appId: string }> {
    const email = `dev-${Math.random().toString(36).slice(2, 8)}@example.com`;
    assert.equal((await cli(['users', 'create', '--email', email, '--password', 'correct horse'])).code, 0);
    const created = await cli(['apps', 'create', '--owner', email, '--name', 'Mover', '--redirect-uri', 'https://mover.example.com/cb', '--scopes', 'read_activity,read_sleep', '--json']);
    const { client_id, client_secret } = JSON.parse(created.stdout) as { client_id: string; client_secret: string };
    return { clientId: client_id, secret: client_secret, appId: (await database.stores.apps.findByClientId(client_id))!.id };
  }

  it('sets the subscriber with the client secret from standard input, shows its code, and verifies it again', async () => {
    const { clientId, secret, appId } = await newApp();
    assert.match((await cli(['apps', 'fitbit-subscriber', clientId])).stdout, /has no Fitbit-compatible subscriber/);
    await expectCliFailure((...args) => cli(args), ['apps', 'fitbit-subscriber', clientId, '--url', 'https://mover.example.com/fitbit'], /^stride: enter the app's client secret/m);
    await expectCliFailure((...args) => cli(args, 'scs_not-it\n'), ['apps', 'fitbit-subscriber', clientId, '--url', 'https://mover.example.com/fitbit', '--client-secret-stdin'], /^stride: that is not the app's current client secret$/m);
    await expectCliFailure((...args) => cli(args, `${secret}\n`), ['apps', 'fitbit-subscriber', clientId, '--url', 'http://10.0.0.1/fitbit', '--client-secret-stdin'], /WEBHOOK_ALLOW_PRIVATE/);

    const set = await cli(['apps', 'fitbit-subscriber', clientId, '--url', 'https://mover.example.com/fitbit', '--verification-code', 'code-from-fitbit-42', '--client-secret-stdin', '--json'], `${secret}\n`);
    assert.equal(set.code, 0, set.stderr);
    const { subscriber } = JSON.parse(set.stdout);
    assert.deepEqual(subscriber, { url: 'https://mover.example.com/fitbit', subscriber_id: '1', state: 'unverified', verification_code: 'code-from-fitbit-42', verification_error: null, created_at: subscriber.created_at });
    const stored = (await database.stores.fitbitSubscriptions.subscriber(appId))!;
    assert.equal(await unsealClientSecret(database.stores, () => 0, appId, stored.secret), secret);

    const shown = await cli(['apps', 'fitbit-subscriber', clientId]);
    assert.match(shown.stdout, /^unverified +https:\/\/mover\.example\.com\/fitbit +subscriber id 1$/m);
    assert.match(shown.stdout, /^verification code: code-from-fitbit-42 +\(answer GET \?verify=<this code> with 204, any other code with 404\)$/m);
    const renamed = await cli(['apps', 'fitbit-subscriber', clientId, '--subscriber-id', 'mover', '--json']);
    assert.equal(JSON.parse(renamed.stdout).subscriber.subscriber_id, 'mover', 'a change keeps the secret and the URL');
    await database.db.kysely.updateTable('webhook_endpoints').set({ verify_at: null, verify_error: 'gave up' }).where('id', '=', stored.id).execute();
    assert.equal((await cli(['apps', 'fitbit-subscriber', clientId, '--verify-again'])).code, 0);
    assert.notEqual((await database.stores.fitbitSubscriptions.subscriber(appId))!.verify_at, null);
  });

  it('issues a new client secret for it with --rotate-secret, and removes it', async () => {
    const { clientId, secret, appId } = await newApp();
    const run = await cli(['apps', 'fitbit-subscriber', clientId, '--url', 'https://mover.example.com/fitbit', '--rotate-secret', '--json']);
    assert.equal(run.code, 0, run.stderr);
    const { client_secret: rotated } = JSON.parse(run.stdout) as { client_secret: string };
    assert.notEqual(rotated, secret);
    assert.equal((await database.stores.apps.findById(appId))!.clientSecretHash, hashCredential(rotated));
    assert.equal(await unsealClientSecret(database.stores, () => 0, appId, (await database.stores.fitbitSubscriptions.subscriber(appId))!.secret), rotated);
    // A rotation of the app's secret later keeps it signing with the new one.
    const again = JSON.parse((await cli(['apps', 'rotate-secret', clientId, '--json'])).stdout) as { client_secret: string };
    assert.equal(await unsealClientSecret(database.stores, () => 0, appId, (await database.stores.fitbitSubscriptions.subscriber(appId))!.secret), again.client_secret);

    assert.match((await cli(['apps', 'fitbit-subscriber', clientId, '--remove'])).stdout, /^removed the Fitbit-compatible subscriber of "Mover"/);
    assert.equal(await database.stores.fitbitSubscriptions.subscriber(appId), undefined);
    await expectCliFailure((...args) => cli(args), ['apps', 'fitbit-subscriber', clientId, '--remove'], /has no Fitbit-compatible subscriber/);
    await expectCliFailure((...args) => cli(args), ['apps', 'fitbit-subscriber', clientId, '--url', 'https://x.example.com/', '--remove'], /one at a time/);
  });
});
