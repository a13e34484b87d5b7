/**
 * python-fitbit (Debian's python3-fitbit), unmodified, against a listening Stride with only its
 * base URL changed (`fitbit.api.Fitbit.API_ENDPOINT`): `subscription()` creates and deletes,
 * `list_subscriptions()` lists, and the subscriber it names hears of the person's upload under the
 * id the library made (`{id}-{collection}`), signed with the client secret the library was given.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { App } from '../../../src/store/apps.js';
import { setSubscriber } from '../../../src/webhooks/fitbit-subscriber.js';
import { createDeliveryWorker, type DeliveryWorker } from '../../../src/webhooks/worker.js';
import { createTestApp, type TestApp } from '../../support/app.js';
import { freePort } from '../../support/cli.js';
import { missing } from '../../support/dependencies.js';
import { confidentialApp, startFitbitSubscriber, tokenOf, type FitbitSubscriber } from '../../support/fitbit-subscriber.js';
import { ALL_RESOURCE_SCOPES, bearer, createUser, type TestUser } from '../../support/tokens.js';

const PYTHON = '/usr/bin/python3';

/** Why python-fitbit cannot run here, or null. */
function pythonFitbitUnavailable(): string | null {
  if (existsSync(PYTHON) && spawnSync(PYTHON, ['-c', 'import fitbit']).status === 0) return null;
  return missing(`${PYTHON} with python-fitbit not found: install it with "apt-get install -y python3-fitbit"; skipping the python-fitbit test`);
}

/** The library's calls, as an app makes them; what each returned, as JSON on stdout. */
const PROGRAM = `
import json, os, time
import fitbit
fitbit.api.Fitbit.API_ENDPOINT = os.environ['STRIDE_URL']
client = fitbit.Fitbit(os.environ['CLIENT_ID'], os.environ['CLIENT_SECRET'],
                       access_token=os.environ['ACCESS_TOKEN'], refresh_token='unused', expires_at=time.time() + 3600)
results = {}
results['activities'] = client.subscription('42', '1', collection='activities')
try:
    client.subscription('99', '1', collection='activities')
except fitbit.exceptions.HTTPConflict as error:
    results['conflict'] = type(error).__name__
results['all'] = client.subscription('43', '1')
results['again'] = client.subscription('43', '1')
results['listed'] = client.list_subscriptions()
results['listed_activities'] = client.list_subscriptions('activities')
results['deleted'] = client.subscription('43', '1', method='DELETE')
results['deleted_activities'] = client.subscription('42', '1', collection='activities', method='DELETE')
try:
    client.subscription('42', '1', collection='activities', method='DELETE')
except fitbit.exceptions.HTTPNotFound as error:
    results['deleted_twice'] = type(error).__name__
results['listed_after'] = client.list_subscriptions()
client.subscription('44', '1', collection='activities')
print(json.dumps(results))
`;

describe('python-fitbit\'s subscriptions against Stride', { skip: pythonFitbitUnavailable() ?? false }, () => {
  let t: TestApp;
  let baseUrl: string;
  let app: App;
  let clientSecret: string;
  let person: TestUser;
  let token: string;
  let subscriber: FitbitSubscriber;
  let worker: DeliveryWorker;

  before(async () => {
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    t = await createTestApp('sqlite', { PUBLIC_URL: baseUrl, WEBHOOK_ALLOW_PRIVATE: 'true' });
    await t.app.listen({ host: '127.0.0.1', port });
    ({ app, clientSecret } = await confidentialApp(t, await createUser(t)));
    subscriber = await startFitbitSubscriber('python-fitbit-code');
    await setSubscriber(t.app.ctx, app, { url: subscriber.url, verificationCode: 'python-fitbit-code', clientSecret });
    person = await createUser(t);
    token = await tokenOf(t, app, person, ALL_RESOURCE_SCOPES);
    worker = createDeliveryWorker(t.app.ctx, t.app.log);
  });
  after(async () => {
    await worker.stop();
    await subscriber.close();
    await t.close();
  });

  function runProgram(): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(PYTHON, ['-c', PROGRAM], {
      env: { PATH: process.env.PATH ?? '', STRIDE_URL: baseUrl, CLIENT_ID: app.clientId, CLIENT_SECRET: clientSecret, ACCESS_TOKEN: token, OAUTHLIB_INSECURE_TRANSPORT: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  }

  it('creates, lists and deletes subscriptions as the library expects, and the subscriber hears of an upload', async () => {
    const run = await runProgram();
    assert.equal(run.code, 0, run.stderr);
    const results = JSON.parse(run.stdout);
    const subscription = (collectionType: string, subscriptionId: string) => ({ collectionType, ownerId: person.id, ownerType: 'user', subscriberId: '1', subscriptionId });
    assert.deepEqual(results.activities, subscription('activities', '42-activities'), 'the library names it {id}-{collection}');
    assert.deepEqual(results.all, subscription('user', '43'));
    assert.deepEqual(results.again, subscription('user', '43'));
    assert.deepEqual(results.listed, { apiSubscriptions: [subscription('user', '43'), subscription('activities', '42-activities')].sort((a, b) => (a.subscriptionId < b.subscriptionId ? -1 : 1)) });
    assert.deepEqual(results.listed_activities, { apiSubscriptions: [subscription('activities', '42-activities')] });
    assert.equal(results.conflict, 'HTTPConflict', 'another id for a collection subscribed: 409');
    assert.equal(results.deleted, true, '204, as the library checks');
    assert.equal(results.deleted_activities, true);
    assert.equal(results.deleted_twice, 'HTTPNotFound');
    assert.deepEqual(results.listed_after, { apiSubscriptions: [] });

    // The subscription the program left, 44-activities, hears of the person's upload.
    await worker.runOnce();
    const start = t.clock() - (t.clock() % 60) - 3600;
    const upload = await t.app.inject({ method: 'POST', url: '/v1/users/me/activities/steps', headers: bearer(token), payload: { samples: [{ start_time: start, value: 20 }] } });
    assert.equal(upload.statusCode, 200);
    await worker.runOnce();
    const [notification] = await subscriber.waitFor(1);
    assert.deepEqual(notification!.entries, [{ collectionType: 'activities', date: new Date(start * 1000).toISOString().slice(0, 10), ownerId: person.id, ownerType: 'user', subscriptionId: '44-activities' }]);
    assert.ok(subscriber.signedWith(notification!, clientSecret));
  });
});
