/**
 * The delivery worker against a real receiver that verifies every message with the
 * `standardwebhooks` package: verification, delivery of each event type, retries, coalescing,
 * secret rotation, and what a revoked grant no longer hears.
 */
import assert from 'node:assert/strict';
import { after, before, beforeEach, it } from 'node:test';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import type { TestApp } from '../support/app.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { createFixture, createOAuthTestApp, obtainTokens, refresh, type Fixture, type Tokens } from '../oauth/flow.js';
import { createDeliveryWorker, retryDelay, type DeliveryWorker } from '../../src/webhooks/worker.js';
import { addEndpoint } from '../../src/webhooks/endpoints.js';
import type { WebhookEndpoint } from '../../src/store/webhooks.js';
import { pageWith } from '../support/feed.js';

cheapPasswordHashing();

const ALL_TYPES = ['steps.updated', 'profile.updated', 'grant.created', 'grant.revoked'];

forEachDialect('webhook delivery', (dialect) => {
  let t: TestApp;
  let fixture: Fixture;
  let receiver: Receiver;
  let worker: DeliveryWorker;
  let endpoint: WebhookEndpoint;

  before(async () => {
    t = await createOAuthTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_COALESCE: '30' });
    worker = createDeliveryWorker(t.app.ctx, t.app.log);
    receiver = await startReceiver();
  });
  after(async () => {
    await worker.stop();
    await receiver.close();
    await t.close();
  });
  beforeEach(async () => {
    fixture = await createFixture(t);
    receiver.received.length = 0;
    endpoint = await addEndpoint(t.app.ctx.stores.webhooks, t.config, fixture.app.id, { url: receiver.url, events: ALL_TYPES }, t.clock());
  });

  const upload = (tokens: Tokens, start: number, minutes = 3) =>
    t.app.inject({
      method: 'POST',
      url: '/v1/users/me/activities/steps',
      headers: { authorization: `Bearer ${tokens.access_token}` },
      payload: { samples: Array.from({ length: minutes }, (_, i) => ({ start_time: start + i * 60, value: 10 + i })) },
    });
  const dayStart = () => t.clock() - (t.clock() % 86400) - 86400;
  const isoDate = (time: number) => new Date(time * 1000).toISOString().slice(0, 10);

  it('verifies the endpoint first, then delivers signed events that standardwebhooks accepts', async () => {
    const tokens = await obtainTokens(t, fixture);
    assert.equal(await worker.runOnce(), 1, 'only the verification: nothing is delivered to an unverified endpoint');
    const [verification] = await receiver.waitFor('webhook.verification');
    assert.ok(receiver.verifies(verification!, endpoint.secret));
    assert.equal((await t.app.ctx.stores.webhooks.find(endpoint.id))!.state, 'active');

    assert.equal((await upload(tokens, dayStart())).statusCode, 200);
    await worker.runOnce();
    const [created] = await receiver.waitFor('grant.created');
    const [steps] = await receiver.waitFor('steps.updated');
    for (const message of [created!, steps!]) {
      assert.ok(receiver.verifies(message, endpoint.secret), message.payload.type);
      assert.match(message.id, /^msg_/);
    }
    assert.equal(created!.payload.data.user_id, fixture.user.id);
    assert.deepEqual(steps!.payload.data.ranges, [{ start_time: dayStart(), end_time: dayStart() + 180 }]);
    assert.equal(steps!.payload.data.dates.length, 1);
    assert.equal(steps!.payload.data.user_id, fixture.user.id);
    assert.ok(!receiver.verifies(steps!, 'whsec_' + Buffer.alloc(32, 7).toString('base64')), 'another secret does not verify');
  });

  it('retries a failing endpoint with backoff until it answers 2xx, then records the answer', async () => {
    const tokens = await obtainTokens(t, fixture);
    await worker.runOnce();
    await receiver.waitFor('webhook.verification');
    // Two messages are due, grant.created and steps.updated: both fail twice.
    receiver.failNext(4);
    await upload(tokens, dayStart());
    await worker.runOnce();
    assert.equal(receiver.received.filter((m) => m.payload.type === 'steps.updated').length, 0);
    assert.equal(await worker.runOnce(), 0, 'not due again before its retry time');
    t.clock.advance(retryDelay(1, () => 1) + 1);
    await worker.runOnce();
    t.clock.advance(retryDelay(2, () => 1) + 1);
    await worker.runOnce();
    await receiver.waitFor('steps.updated');
    const deliveries = await t.app.ctx.stores.webhooks.deliveries(endpoint.id, 10);
    const steps = deliveries.find((d) => d.type === 'steps.updated')!;
    assert.equal(steps.state, 'succeeded');
    assert.equal(steps.attempts, 3);
    assert.equal(steps.last_status, 200);
  });

  it('gives up after WEBHOOK_RETRY_FOR and marks the endpoint failing, until a message succeeds', async () => {
    await obtainTokens(t, fixture);
    await worker.runOnce();
    await receiver.waitFor('webhook.verification');
    receiver.failNext(1000);
    await t.app.inject({ method: 'GET', url: '/healthz' });
    await t.app.ctx.stores.webhooks.sendTest(endpoint.id, t.clock());
    for (let i = 0; i < 30 && (await t.app.ctx.stores.webhooks.find(endpoint.id))!.state !== 'failing'; i++) {
      t.clock.advance(86400);
      await worker.runOnce();
    }
    assert.equal((await t.app.ctx.stores.webhooks.find(endpoint.id))!.state, 'failing');
    receiver.failNext(0);
    await t.app.ctx.stores.webhooks.sendTest(endpoint.id, t.clock());
    await worker.runOnce();
    assert.equal((await t.app.ctx.stores.webhooks.find(endpoint.id))!.state, 'active');
  });

  it('coalesces steps.updated to one message per user and endpoint per window, ranges merged', async () => {
    const tokens = await obtainTokens(t, fixture);
    await worker.runOnce();
    const start = dayStart();
    await upload(tokens, start);
    await upload(tokens, start + 120, 5);
    await worker.runOnce();
    let steps = await receiver.waitFor('steps.updated');
    assert.equal(steps.length, 1);
    assert.deepEqual(steps[0]!.payload.data.ranges, [{ start_time: start, end_time: start + 420 }]);
    await upload(tokens, start + 3600);
    await worker.runOnce();
    assert.equal(receiver.received.filter((m) => m.payload.type === 'steps.updated').length, 1, 'the next one waits for the window');
    t.clock.advance(30);
    await worker.runOnce();
    steps = await receiver.waitFor('steps.updated', 2);
    assert.deepEqual(steps[1]!.payload.data.ranges, [{ start_time: start + 3600, end_time: start + 3780 }]);
    const feed = await pageWith(async () => (await t.app.ctx.stores.webhooks.feed(fixture.app.id, null, 100))!, (page) => page.data.filter((e) => e.type === 'steps.updated').length >= 3);
    assert.equal(feed.data.filter((e) => e.type === 'steps.updated').length, 3, 'the feed keeps every upload');
  });

  it('joins two sparse uploads of one date waiting in a window into one message: the date once, one range covering both', async () => {
    const tokens = await obtainTokens(t, fixture);
    await worker.runOnce();
    const start = dayStart();
    const sparse = (from: number, to: number) => Array.from({ length: Math.floor((to - from) / 300) }, (_, i) => ({ start_time: from + i * 300, value: 30 }));
    const post = (samples: Array<{ start_time: number; value: number }>) =>
      t.app.inject({ method: 'POST', url: '/v1/users/me/activities/steps', headers: { authorization: `Bearer ${tokens.access_token}` }, payload: { samples } });
    // The first is sent at once; the next two wait for the window and are joined.
    assert.equal((await post(sparse(start, start + 3600))).statusCode, 200);
    await worker.runOnce();
    await receiver.waitFor('steps.updated');
    assert.equal((await post(sparse(start + 8 * 3600, start + 10 * 3600))).statusCode, 200);
    assert.equal((await post(sparse(start + 20 * 3600, start + 21 * 3600))).statusCode, 200);
    t.clock.advance(30);
    await worker.runOnce();
    const [, joined] = await receiver.waitFor('steps.updated', 2);
    assert.deepEqual(joined!.payload.data, { user_id: fixture.user.id, ranges: [{ start_time: start + 8 * 3600, end_time: start + 21 * 3600 - 300 + 60 }], dates: [isoDate(start)] });
    assert.ok(joined!.body.length <= 400, `${joined!.body.length} bytes`);
    assert.ok(receiver.verifies(joined!, endpoint.secret));
    await worker.runOnce();
    assert.equal(receiver.received.filter((m) => m.payload.type === 'steps.updated').length, 2, 'the joined uploads made one message');
  });

  it('keeps a stride change\'s distance.updated apart: an upload in its window makes its own message', async () => {
    const tokens = await obtainTokens(t, fixture);
    await t.app.ctx.stores.webhooks.update(endpoint.id, { eventTypes: [...ALL_TYPES, 'distance.updated'] }, t.clock());
    await worker.runOnce();
    const start = dayStart();
    assert.equal((await upload(tokens, start)).statusCode, 200);
    await worker.runOnce();
    await receiver.waitFor('distance.updated');
    t.clock.advance(60);
    await t.app.ctx.stores.users.updateProfile(fixture.user.id, { stride_length_cm: 90 }, t.clock());
    // Within the window of the stride change's message, still waiting: an upload that names dates.
    const later = await upload(tokens, start + 3600);
    assert.equal(later.statusCode, 200, later.body);
    t.clock.advance(30);
    await worker.runOnce();
    await worker.runOnce();
    const distance = (await receiver.waitFor('distance.updated', 3)).map((m) => m.payload.data);
    const [stride, ...uploads] = [...distance].sort((a, b) => (a.cause ? -1 : b.cause ? 1 : 0));
    assert.deepEqual(stride, { user_id: fixture.user.id, cause: 'stride_length', ranges: [{ start_time: start, end_time: start + 86_400 }], start_date: isoDate(start), end_date: isoDate(start) });
    assert.deepEqual(uploads.map((d) => d.dates), [[isoDate(start)], [isoDate(start)]]);
  });

  it('signs with the old secret beside the new one for a day after a rotation', async () => {
    await obtainTokens(t, fixture);
    await worker.runOnce();
    const rotated = (await t.app.ctx.stores.webhooks.rotateSecret(endpoint.id, t.clock(), 86400))!;
    await t.app.ctx.stores.webhooks.sendTest(endpoint.id, t.clock());
    await worker.runOnce();
    const [during] = await receiver.waitFor('webhook.test');
    assert.equal(during!.headers['webhook-signature']!.split(' ').length, 2);
    assert.ok(receiver.verifies(during!, endpoint.secret), 'the old secret still verifies');
    assert.ok(receiver.verifies(during!, rotated.secret), 'the new secret verifies');
    t.clock.advance(86401);
    await t.app.ctx.stores.webhooks.sendTest(endpoint.id, t.clock());
    await worker.runOnce();
    const [, later] = await receiver.waitFor('webhook.test', 2);
    assert.ok(!receiver.verifies(later!, endpoint.secret), 'the old secret has ended');
    assert.ok(receiver.verifies(later!, rotated.secret));
  });

  it('tells the app of revocations with their reason, and drops what it may no longer read', async () => {
    const tokens = await obtainTokens(t, fixture);
    await worker.runOnce();
    receiver.received.length = 0;
    await t.app.ctx.stores.webhooks.update(endpoint.id, { state: 'paused' }, t.clock());
    await upload(tokens, dayStart());
    // Reuse of a rotated refresh token after the replay window ends the grant.
    assert.equal((await refresh(t, fixture, tokens.refresh_token)).statusCode, 200);
    t.clock.advance(t.config.refreshReplayWindow + 1);
    assert.equal((await refresh(t, fixture, tokens.refresh_token)).statusCode, 400);
    await t.app.ctx.stores.webhooks.update(endpoint.id, { state: 'active' }, t.clock());
    await worker.runOnce();
    const [revoked] = await receiver.waitFor('grant.revoked');
    assert.equal(revoked!.payload.data.reason, 'token_reuse_detected');
    assert.equal(receiver.received.filter((m) => m.payload.type === 'steps.updated').length, 0, 'the upload waiting for delivery was dropped');
  });

  it('sends nothing about a user to an app whose grant lacks the scope that reads it', async () => {
    const tokens = await obtainTokens(t, fixture, { scope: 'read_profile write_activity' });
    await worker.runOnce();
    await upload(tokens, dayStart());
    await worker.runOnce();
    await receiver.waitFor('grant.created');
    const feed = await pageWith(async () => (await t.app.ctx.stores.webhooks.feed(fixture.app.id, null, 100))!, (page) => page.data.length > 0);
    assert.deepEqual(feed.data.map((e) => e.type), ['grant.created']);
    assert.equal(receiver.received.filter((m) => m.payload.type === 'steps.updated').length, 0);
  });
});
