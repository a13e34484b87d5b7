/**
 * The Fitbit-compatible subscriber page of the dashboard (src/web/pages/fitbit-subscriber.ts): set
 * with the client secret, checked; its verification code shown; verified by a real subscriber and
 * its delivery log; verifying again, removing, and nobody else's.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { createDeliveryWorker, type DeliveryWorker } from '../../src/webhooks/worker.js';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { startFitbitSubscriber, tokenOf, type FitbitSubscriber } from '../support/fitbit-subscriber.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { bearer } from '../support/tokens.js';
import { Browser, createFixture, createOAuthTestApp, formFields, type Fixture } from '../oauth/flow.js';
import { formPage, newAccount, signedIn, submit, textOf } from './pages-support.js';

cheapPasswordHashing();

forEachDialect('Fitbit-compatible subscriber page', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  let developer: Browser;
  let subscriber: FitbitSubscriber;
  let worker: DeliveryWorker;
  const page = () => `/dashboard/apps/${f.app.clientId}/fitbit-subscriber`;
  const CODE = 'abcdef0123456789';

  before(async () => {
    t = await createOAuthTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    f = await createFixture(t);
    developer = await signedIn(t, f.developer);
    subscriber = await startFitbitSubscriber(CODE);
    worker = createDeliveryWorker(t.app.ctx, t.app.log);
  });
  after(async () => {
    await worker.stop();
    await subscriber.close();
    await t.close();
  });

  it('sets the subscriber with the app\'s client secret, shows its code, and logs its notifications once it is verified', async () => {
    const webhooks = await formPage(developer, `/dashboard/apps/${f.app.clientId}/webhooks`);
    assert.match(String(textOf(webhooks.body, 'fitbit-subscriber-link')), /Set a subscriber/);
    const empty = await developer.get(page());
    assert.equal(empty.status, 200);
    assert.match(empty.body, /Set the subscriber/);

    const withoutSecret = await submit(developer, page(), page(), { url: subscriber.url, verification_code: CODE });
    assert.equal(withoutSecret.status, 400);
    assert.match(withoutSecret.body, /id="client_secret-error"[^>]*>Enter the app&#39;s client secret/);
    assert.match(withoutSecret.body, new RegExp(`value="${subscriber.url}"`), 'what was typed is kept');
    const wrongSecret = await submit(developer, page(), page(), { url: subscriber.url, verification_code: CODE, client_secret: `${f.secret}x` });
    assert.match(wrongSecret.body, /That is not the app&#39;s current client secret/);
    assert.equal(await t.app.ctx.stores.fitbitSubscriptions.subscriber(f.app.id), undefined);

    const saved = await submit(developer, page(), page(), { url: subscriber.url, verification_code: CODE, client_secret: f.secret });
    assert.equal(saved.status, 303);
    const shown = await developer.get(saved.location().pathname + saved.location().search);
    assert.equal(textOf(shown.body, 'verification-code'), CODE);
    assert.equal(textOf(shown.body, 'subscriber-id'), '1');
    assert.match(shown.body, /state-unverified/);
    assert.ok(!shown.body.includes(f.secret), 'the secret is never shown back');

    await worker.runOnce();
    const verified = await developer.get(page());
    assert.match(verified.body, /State: <span class="state state-active">active<\/span>/);
    assert.doesNotMatch(verified.body, /Verify again now/);
    assert.match(String(textOf((await formPage(developer, `/dashboard/apps/${f.app.clientId}/webhooks`)).body, 'fitbit-subscriber-link')), /Manage the subscriber/);

    const token = await tokenOf(t, f.app, f.user, ['read_activity', 'write_activity']);
    assert.equal((await t.app.inject({ method: 'POST', url: '/1/user/-/activities/apiSubscriptions/walker.json', headers: bearer(token) })).statusCode, 201);
    const start = t.clock() - (t.clock() % 60) - 3600;
    await t.app.inject({ method: 'POST', url: '/v1/users/me/activities/steps', headers: bearer(token), payload: { samples: [{ start_time: start, value: 12 }] } });
    await worker.runOnce();
    const [notification] = await subscriber.waitFor(1);
    assert.ok(subscriber.signedWith(notification!, f.secret));
    const log = await developer.get(page());
    assert.match(log.body, /<code>fitbit\.activities<\/code><br><span class="meta">succeeded<\/span>/);
    assert.match(log.body, /<td>204<\/td>/);
  });

  it('verifies again on request while unverified, and removes the subscriber with its subscriptions', async () => {
    subscriber.answers = 'yes-to-anything';
    const moved = await submit(developer, page(), page(), { url: `${subscriber.url}/moved`, verification_code: '', subscriber_id: 'mover' });
    assert.equal(moved.status, 303, 'the secret is kept: not asked again');
    await worker.runOnce();
    const failing = await developer.get(page());
    assert.match(String(textOf(failing.body, 'verify-error')), /answered 204 to \?verify= with a wrong code/);
    subscriber.answers = 'correct';
    const again = await submit(developer, page(), `${page()}/verify`, {});
    assert.equal(again.status, 303);
    await worker.runOnce();
    assert.equal((await t.app.ctx.stores.fitbitSubscriptions.subscriber(f.app.id))!.state, 'active');

    const removed = await submit(developer, page(), `${page()}/remove`, {});
    assert.equal(removed.status, 303);
    assert.match((await developer.get(removed.location().pathname + removed.location().search)).body, /The subscriber was removed, with its subscriptions/);
    assert.equal(await t.app.ctx.stores.fitbitSubscriptions.subscriber(f.app.id), undefined);
    assert.deepEqual(await t.app.ctx.stores.fitbitSubscriptions.list(f.app.id, f.user.id), []);
  });

  it('is the app owner\'s only', async () => {
    const stranger = await signedIn(t, await newAccount(t, 'Stranger'));
    assert.equal((await stranger.get(page())).status, 404);
    const own = await formPage(developer, page());
    const refused = await stranger.post(page(), { ...formFields(own.body, page()), url: 'https://evil.example.com/', client_secret: f.secret });
    assert.notEqual(refused.status, 303);
    assert.equal(await t.app.ctx.stores.fitbitSubscriptions.subscriber(f.app.id), undefined);
  });
});
