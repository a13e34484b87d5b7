/**
 * Fitbit-compatible notifications in the stores (store/fitbit-notifications.ts): written in the
 * transaction of the change, only for the collections subscribed and apps that read them, and
 * dropped with the scope that reads them when the person withdraws it on a later consent.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, it } from 'node:test';
import { consentOutcome } from '../../src/oauth/authorize.js';
import { hashCredential, newCredential } from '../../src/security/secrets.js';
import { setSubscriber } from '../../src/webhooks/fitbit-subscriber.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { confidentialApp } from '../support/fitbit-subscriber.js';
import { createUser, issueAccessToken } from '../support/tokens.js';

forEachDialect('Fitbit-compatible notifications in the stores', (dialect) => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true' });
  });
  after(() => t.close());

  it('writes a notification only for a collection subscribed, and drops it with the scope the person withdraws', async () => {
    const db = t.database.db.kysely;
    const person = await createUser(t);
    const { app, clientSecret } = await confidentialApp(t, await createUser(t));
    const subscriber = await setSubscriber(t.app.ctx, app, { url: 'https://hooks.example.test/fitbit', clientSecret });
    const consent = (requested: string[], granted: string[]) =>
      t.database.stores.grants.recordConsent(
        {
          userId: person.id, appId: app.id, newGrantId: randomUUID(), granted, now: t.clock(),
          issue: {
            code: {
              code_hash: hashCredential(newCredential('authorizationCode')), app_id: app.id, user_id: person.id, redirect_uri: 'https://mover.example.test/callback',
              scope: granted.join(' '), code_challenge: null, code_challenge_method: null, expires_at: t.clock() + 60, consumed_at: null, created_at: t.clock(), requested_scope: null,
            },
          },
        },
        (previous) => consentOutcome(previous === '' ? [] : previous.split(' '), requested, granted),
      );
    assert.equal(await consent(['read_sleep', 'read_body'], ['read_sleep', 'read_body']), true);
    for (const collection of ['sleep', 'userRevokedAccess']) {
      assert.equal(await t.database.stores.fitbitSubscriptions.subscribe({ appId: app.id, endpointId: subscriber.id, userId: person.id, collection, subscriptionId: collection }, t.clock()), 'created');
    }

    // Another app of the person's writes a night and a weight: only the night is subscribed.
    const writer = await issueAccessToken(t, person, ['write_sleep', 'write_body']);
    const start = Math.floor(t.clock() / 60) * 60 - 10 * 3600;
    const night = await t.app.inject({
      method: 'POST', url: '/v1/users/me/sleep/', headers: { authorization: `Bearer ${writer.token}` },
      payload: { start_time: start, end_time: start + 3600, stages: [{ stage: 'light', start_time: start, end_time: start + 3600 }] },
    });
    assert.equal(night.statusCode, 200, night.body);
    assert.equal((await t.app.inject({ method: 'POST', url: '/v1/users/me/body/weight/', headers: { authorization: `Bearer ${writer.token}` }, payload: { time: start, kg: 61 } })).statusCode, 200);
    const messages = async () => (await db.selectFrom('webhook_deliveries').select(['type', 'payload']).where('endpoint_id', '=', subscriber.id).execute());
    const [sleep, ...others] = await messages();
    assert.deepEqual(others, []);
    assert.equal(sleep!.type, 'fitbit.sleep');
    assert.deepEqual(JSON.parse(sleep!.payload), [{ collectionType: 'sleep', date: new Date((start + 3600) * 1000).toISOString().slice(0, 10), ownerId: person.id, ownerType: 'user', subscriptionId: 'sleep' }]);

    // The person asked again, and unticked sleep: the notification about their night goes.
    assert.equal(await consent(['read_sleep', 'read_body'], ['read_body']), true);
    assert.deepEqual(await messages(), []);
    assert.equal((await t.app.inject({ method: 'DELETE', url: `/v1/users/me/sleep/${(night.json() as { id: string }).id}`, headers: { authorization: `Bearer ${writer.token}` } })).statusCode, 200);
    assert.deepEqual(await messages(), [], 'and no more come of sleep');
  });
});
