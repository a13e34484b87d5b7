/**
 * Notifications to Fitbit-compatible subscribers through the delivery worker, against real HTTP
 * subscribers that answer Fitbit's verification and check `X-Fitbit-Signature` as Fitbit's
 * receivers do: nothing for a subscriber that fails the verification, Fitbit's array for an upload,
 * signed with the client secret and "&", coalesced per date, only the collections subscribed,
 * userRevokedAccess when the grant ends and nothing of the person's data after it, the new secret
 * after a rotation.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, it } from 'node:test';
import { rotateClientSecret } from '../../src/domain/apps.js';
import type { App } from '../../src/store/apps.js';
import { setSubscriber } from '../../src/webhooks/fitbit-subscriber.js';
import { createDeliveryWorker, type DeliveryWorker } from '../../src/webhooks/worker.js';
import { createTestApp, type TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { confidentialApp, startFitbitSubscriber, tokenOf, type FitbitSubscriber, type VerificationAnswers } from '../support/fitbit-subscriber.js';
import { ALL_RESOURCE_SCOPES, bearer, createUser, issueAccessToken, type TestUser } from '../support/tokens.js';

const CODE = 'c0ffee'.repeat(8);
const COALESCE = 30;

forEachDialect('Fitbit-compatible notifications', (dialect) => {
  let t: TestApp;
  let worker: DeliveryWorker;
  const subscribers: FitbitSubscriber[] = [];

  before(async () => {
    t = await createTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_COALESCE: String(COALESCE) });
    worker = createDeliveryWorker(t.app.ctx, t.app.log);
  });
  after(async () => {
    await worker.stop();
    for (const subscriber of subscribers) await subscriber.close();
    await t.close();
  });
  beforeEach(() => t.clock.set(Date.UTC(2026, 10, 20, 12, 0) / 1000));

  /** An app with a subscriber answering as `answers` says, a person, their token, and the app's subscription `id` of `collection`. */
  async function subscribed(answers: VerificationAnswers = 'correct', collection = 'activities') {
    const subscriber = await startFitbitSubscriber(CODE, answers);
    subscribers.push(subscriber);
    const { app, clientSecret } = await confidentialApp(t, await createUser(t));
    await setSubscriber(t.app.ctx, app, { url: subscriber.url, verificationCode: CODE, clientSecret });
    const person = await createUser(t);
    const token = await tokenOf(t, app, person, ALL_RESOURCE_SCOPES);
    const path = collection === '' ? '/1/user/-/apiSubscriptions/sub-1.json' : `/1/user/-/${collection}/apiSubscriptions/sub-1.json`;
    const created = await t.app.inject({ method: 'POST', url: path, headers: bearer(token) });
    assert.equal(created.statusCode, 201, created.body);
    return { subscriber, app, clientSecret, person, token };
  }

  const uploadSteps = (token: string, start: number) =>
    t.app.inject({ method: 'POST', url: '/v1/users/me/activities/steps', headers: bearer(token), payload: { samples: [{ start_time: start, value: 40 }, { start_time: start + 60, value: 50 }] } });
  const uploadWeight = (token: string, time: number) => t.app.inject({ method: 'POST', url: '/v1/users/me/body/weight/', headers: bearer(token), payload: { time, kg: 70.5 } });
  /** The clock's minute (uploads are per minute; deliverFor moves the clock 5 s at a time). */
  const now = () => t.clock() - (t.clock() % 60);
  const isoDate = (time: number) => new Date(time * 1000).toISOString().slice(0, 10);
  const state = async (app: App) => (await t.app.ctx.stores.fitbitSubscriptions.subscriber(app.id))!;

  /** Runs the worker as the clock passes `seconds`, a few times. */
  async function deliverFor(seconds: number) {
    for (let passed = 0; passed <= seconds; passed += 5) {
      await worker.runOnce();
      t.clock.advance(5);
    }
  }

  for (const answers of ['yes-to-anything', 'no-to-its-code'] as const) {
    it(`sends nothing to a subscriber that answers ${answers === 'yes-to-anything' ? '204 to a wrong code' : '404 to its own code'}, which stays unverified`, async () => {
      const { subscriber, app, token } = await subscribed(answers);
      assert.equal((await uploadSteps(token, now() - 3600)).statusCode, 200);
      await deliverFor(200);
      assert.ok(subscriber.verifications.length >= 2, 'the verification was tried again');
      assert.equal(subscriber.notifications.length, 0, 'nothing is sent to an unverified subscriber');
      const after = await state(app);
      assert.equal(after.state, 'unverified');
      assert.match(String(after.verify_error), answers === 'yes-to-anything' ? /answered 204 to \?verify= with a wrong code; it must answer 404/ : /answered 404 to \?verify= with its verification code; it must answer 204/);
    });
  }

  it('verifies a subscriber that tells its code from a wrong one, then sends Fitbit\'s array for an upload, signed with the client secret and "&"', async () => {
    const { subscriber, app, clientSecret, person, token } = await subscribed();
    assert.equal(await worker.runOnce(), 1, 'the verification alone');
    assert.equal(subscriber.verifications[0], CODE);
    assert.notEqual(subscriber.verifications[1], CODE, 'and a wrong code, which it must refuse');
    assert.equal((await state(app)).state, 'active');

    const start = now() - 3600;
    assert.equal((await uploadSteps(token, start)).statusCode, 200);
    await worker.runOnce();
    const [notification] = await subscriber.waitFor(1);
    assert.deepEqual(notification!.entries, [{ collectionType: 'activities', date: isoDate(start), ownerId: person.id, ownerType: 'user', subscriptionId: 'sub-1' }]);
    assert.equal(notification!.body, JSON.stringify(notification!.entries), 'the keys in Fitbit\'s order');
    assert.equal(notification!.headers['content-type'], 'application/json');
    assert.ok(subscriber.signedWith(notification!, clientSecret), 'the receiver checks it with its client secret and "&"');
    assert.ok(!subscriber.signedWith(notification!, `scs_${'A'.repeat(43)}`), 'another secret does not verify');
    assert.ok(!subscriber.signedWith(notification!, clientSecret.slice(0, -1)));
    const [delivery] = await t.app.ctx.stores.webhooks.deliveries((await state(app)).id, 5);
    assert.deepEqual([delivery!.type, delivery!.state, delivery!.last_status], ['fitbit.activities', 'succeeded', 204]);
  });

  it('coalesces the uploads of one date into one notification per window, and tells another date beside it', async () => {
    const { subscriber, token, person } = await subscribed();
    await worker.runOnce();
    const today = now() - 3600;
    const yesterday = today - 86400;
    // A steps upload writes steps.updated and distance.updated: both are the activities of one date.
    await uploadSteps(token, today);
    await uploadSteps(token, today + 600);
    await worker.runOnce();
    const [first] = await subscriber.waitFor(1);
    assert.deepEqual(first!.entries.map((entry) => entry.date), [isoDate(today)]);

    await uploadSteps(token, today + 1200);
    await uploadSteps(token, yesterday);
    await worker.runOnce();
    assert.equal(subscriber.notifications.length, 1, 'the next one waits for the window');
    t.clock.advance(COALESCE);
    await worker.runOnce();
    const [, second] = await subscriber.waitFor(2);
    assert.deepEqual(second!.entries, [isoDate(yesterday), isoDate(today)].map((date) => ({ collectionType: 'activities', date, ownerId: person.id, ownerType: 'user', subscriptionId: 'sub-1' })));
    await deliverFor(120);
    assert.equal(subscriber.notifications.length, 2);
  });

  it('tells a subscription of every collection each collection that changed, and one of activities nothing of weight', async () => {
    const all = await subscribed('correct', '');
    const activities = await subscribed('correct', 'activities');
    await worker.runOnce();
    const time = now() - 600;
    for (const { token } of [all, activities]) assert.equal((await uploadWeight(token, time)).statusCode, 200);
    await deliverFor(10);
    const [notification] = await all.subscriber.waitFor(1);
    assert.deepEqual(notification!.entries, [{ collectionType: 'body', date: isoDate(time), ownerId: all.person.id, ownerType: 'user', subscriptionId: 'sub-1' }]);
    assert.equal(activities.subscriber.notifications.length, 0);
  });

  it('tells userRevokedAccess when the grant ends, drops the notification still waiting, and tells nothing of the person\'s data after it', async () => {
    const { subscriber, app, person, token } = await subscribed('correct', '');
    await worker.runOnce();
    await uploadSteps(token, now() - 3600);
    await worker.runOnce();
    await subscriber.waitFor(1);
    // Within the window: this one waits, and must not go once the grant has ended.
    await uploadSteps(token, now() - 1800);
    assert.equal(await t.app.ctx.stores.grants.revokeForUser(person.id, app.id, now()), true);
    await deliverFor(60);
    const [, revoked] = await subscriber.waitFor(2);
    assert.deepEqual(revoked!.entries, [{ collectionType: 'userRevokedAccess', date: isoDate(now()), ownerId: person.id, ownerType: 'user', subscriptionId: 'sub-1' }]);

    // Another app of the person's writes their steps: this app no longer hears of them.
    const { token: other } = await issueAccessToken(t, person as TestUser, ALL_RESOURCE_SCOPES);
    assert.equal((await uploadSteps(other, now() - 600)).statusCode, 200);
    await deliverFor(120);
    assert.deepEqual(subscriber.notifications.map((n) => n.entries[0]!.collectionType), ['activities', 'userRevokedAccess']);
  });

  it('signs with the new client secret once it is rotated', async () => {
    const { subscriber, app, clientSecret, token } = await subscribed();
    await worker.runOnce();
    const rotated = await rotateClientSecret(t.app.ctx.stores, t.clock, (await t.app.ctx.stores.apps.findById(app.id))!);
    await uploadSteps(token, now() - 3600);
    await worker.runOnce();
    const [notification] = await subscriber.waitFor(1);
    assert.ok(subscriber.signedWith(notification!, rotated));
    assert.ok(!subscriber.signedWith(notification!, clientSecret));
  });
});
