/**
 * Fitbit's subscriptions API on the Fitbit-compatible face (src/api/fitbit/subscriptions.ts):
 * create (201, 200 for the same one again), show, list and delete (204) with Fitbit's shapes, the
 * 409s of an id the app already uses, the scopes of each collection, and the subscriber that
 * `X-Fitbit-Subscriber-Id` names.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { App } from '../../../src/store/apps.js';
import { setSubscriber } from '../../../src/webhooks/fitbit-subscriber.js';
import { createTestApp, type TestApp } from '../../support/app.js';
import { forEachDialect } from '../../support/databases.js';
import { confidentialApp, tokenOf } from '../../support/fitbit-subscriber.js';
import { ALL_RESOURCE_SCOPES, bearer, createUser } from '../../support/tokens.js';
import { fitbitErrorOf } from './fitbit-support.js';

forEachDialect('Fitbit-compatible subscriptions API', (dialect) => {
  let t: TestApp;
  let app: App;
  let clientSecret: string;
  before(async () => {
    t = await createTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    ({ app, clientSecret } = await confidentialApp(t, await createUser(t)));
    await setSubscriber(t.app.ctx, app, { url: 'http://127.0.0.1:9/fitbit', clientSecret });
  });
  after(() => t.close());

  const call = (method: 'POST' | 'GET' | 'DELETE', token: string, path: string, headers: Record<string, string> = {}) =>
    t.app.inject({ method, url: path, headers: { ...bearer(token), ...headers } });

  it('creates a subscription with 201, the same one again with 200, and shows, lists and deletes it with Fitbit\'s answers', async () => {
    const person = await createUser(t);
    const token = await tokenOf(t, app, person, ALL_RESOURCE_SCOPES);
    const created = await call('POST', token, '/1/user/-/activities/apiSubscriptions/7-activities.json', { 'x-fitbit-subscriber-id': '1' });
    assert.equal(created.statusCode, 201, created.body);
    const activities = { collectionType: 'activities', ownerId: person.id, ownerType: 'user', subscriberId: '1', subscriptionId: '7-activities' };
    assert.deepEqual(created.json(), activities);
    const again = await call('POST', token, `/1/user/${person.id}/activities/apiSubscriptions/7-activities.json`);
    assert.equal(again.statusCode, 200, 'the same subscription again: 200');
    assert.deepEqual(again.json(), activities);

    const all = await call('POST', token, '/1/user/-/apiSubscriptions/7.json');
    assert.equal(all.statusCode, 201);
    const user = { collectionType: 'user', ownerId: person.id, ownerType: 'user', subscriberId: '1', subscriptionId: '7' };
    assert.deepEqual(all.json(), user, 'a subscription to every collection is of the collection type user');

    assert.deepEqual((await call('GET', token, '/1/user/-/apiSubscriptions.json')).json(), { apiSubscriptions: [user, activities] }, 'oldest first, then by id');
    assert.deepEqual((await call('GET', token, '/1/user/-/activities/apiSubscriptions.json')).json(), { apiSubscriptions: [activities] });
    assert.deepEqual((await call('GET', token, '/1/user/-/sleep/apiSubscriptions.json')).json(), { apiSubscriptions: [] });
    assert.deepEqual((await call('GET', token, '/1/user/-/activities/apiSubscriptions/7-activities.json')).json(), activities);

    const deleted = await call('DELETE', token, '/1/user/-/activities/apiSubscriptions/7-activities.json');
    assert.equal(deleted.statusCode, 204);
    assert.equal(deleted.body, '');
    const gone = await call('DELETE', token, '/1/user/-/activities/apiSubscriptions/7-activities.json');
    assert.equal(gone.statusCode, 404);
    assert.equal(fitbitErrorOf(gone.body).errorType, 'not_found');
    assert.equal((await call('GET', token, '/1/user/-/activities/apiSubscriptions/7-activities.json')).statusCode, 404);
    assert.deepEqual((await call('GET', token, '/1/user/-/apiSubscriptions.json')).json(), { apiSubscriptions: [user] });
  });

  it('answers 409 for an id the app uses for another person or collection, and for a collection subscribed under another id', async () => {
    const [first, second] = [await createUser(t), await createUser(t)];
    const [firstToken, secondToken] = [await tokenOf(t, app, first, ALL_RESOURCE_SCOPES), await tokenOf(t, app, second, ALL_RESOURCE_SCOPES)];
    assert.equal((await call('POST', firstToken, '/1/user/-/sleep/apiSubscriptions/shared.json')).statusCode, 201);
    for (const [token, path] of [
      [secondToken, '/1/user/-/sleep/apiSubscriptions/shared.json'],
      [firstToken, '/1/user/-/body/apiSubscriptions/shared.json'],
      [firstToken, '/1/user/-/sleep/apiSubscriptions/another.json'],
    ] as const) {
      const conflict = await call('POST', token, path);
      assert.equal(conflict.statusCode, 409, path);
      assert.equal(fitbitErrorOf(conflict.body).fieldName, 'subscription-id');
    }
    // Another app may use the same id.
    const { app: other, clientSecret: otherSecret } = await confidentialApp(t, await createUser(t));
    await setSubscriber(t.app.ctx, other, { url: 'http://127.0.0.1:9/other', clientSecret: otherSecret });
    assert.equal((await call('POST', await tokenOf(t, other, second, ALL_RESOURCE_SCOPES), '/1/user/-/sleep/apiSubscriptions/shared.json')).statusCode, 201);
    // The second person cannot see or end the first's.
    assert.equal((await call('DELETE', secondToken, '/1/user/-/sleep/apiSubscriptions/shared.json')).statusCode, 404);
    assert.deepEqual((await call('GET', secondToken, '/1/user/-/apiSubscriptions.json')).json(), { apiSubscriptions: [] });
  });

  it('needs the read scope of the collection (all three for every collection), and any token for userRevokedAccess', async () => {
    const person = await createUser(t);
    const token = await tokenOf(t, app, person, ['read_activity', 'read_profile']);
    for (const [path, scope] of [['/1/user/-/sleep/apiSubscriptions/a.json', 'read_sleep'], ['/1/user/-/body/apiSubscriptions/b.json', 'read_body'], ['/1/user/-/apiSubscriptions/c.json', 'read_body']] as const) {
      const refused = await call('POST', token, path);
      assert.equal(refused.statusCode, 403, path);
      const error = fitbitErrorOf(refused.body);
      assert.equal(error.errorType, 'insufficient_scope');
      assert.match(error.message, new RegExp(scope));
    }
    assert.equal((await call('POST', token, '/1/user/-/activities/apiSubscriptions/d.json')).statusCode, 201);
    const profileOnly = await tokenOf(t, app, await createUser(t), ['read_profile']);
    const revocations = await call('POST', profileOnly, '/1/user/-/userRevokedAccess/apiSubscriptions/e.json');
    assert.equal(revocations.statusCode, 201, revocations.body);
    assert.equal(revocations.json().collectionType, 'userRevokedAccess');
  });

  it('refuses a collection Stride does not hold, a bad id, another person\'s user id, a subscriber the app does not have, and an app without one', async () => {
    const person = await createUser(t);
    const token = await tokenOf(t, app, person, ALL_RESOURCE_SCOPES);
    const foods = await call('POST', token, '/1/user/-/foods/apiSubscriptions/f.json');
    assert.equal(foods.statusCode, 400);
    assert.deepEqual([fitbitErrorOf(foods.body).errorType, fitbitErrorOf(foods.body).fieldName], ['validation', 'collection-path']);
    const long = await call('POST', token, `/1/user/-/apiSubscriptions/${'x'.repeat(51)}.json`);
    assert.equal(fitbitErrorOf(long.body).fieldName, 'subscription-id');
    assert.equal((await call('POST', token, `/1/user/${(await createUser(t)).id}/apiSubscriptions/g.json`)).statusCode, 403);
    const otherSubscriber = await call('POST', token, '/1/user/-/apiSubscriptions/h.json', { 'x-fitbit-subscriber-id': '2' });
    assert.equal(otherSubscriber.statusCode, 400);
    assert.equal(fitbitErrorOf(otherSubscriber.body).fieldName, 'X-Fitbit-Subscriber-Id');

    const { app: bare } = await confidentialApp(t, person);
    const bareToken = await tokenOf(t, bare, person, ALL_RESOURCE_SCOPES);
    const none = await call('POST', bareToken, '/1/user/-/apiSubscriptions/i.json');
    assert.equal(none.statusCode, 400);
    assert.match(fitbitErrorOf(none.body).message, /no Fitbit-compatible subscriber/);
    assert.deepEqual((await call('GET', bareToken, '/1/user/-/apiSubscriptions.json')).json(), { apiSubscriptions: [] });
  });
});
