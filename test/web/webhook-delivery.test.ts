/**
 * A webhook delivery's page, with a real receiver: the payload sent, the receiver's status and the
 * first 1 KB of its answer; "Send a test event" lands on its delivery's page, which reloads itself
 * (no script needed) until the receiver answered.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { createFixture, createOAuthTestApp, formFields, type Browser, type Fixture } from '../oauth/flow.js';
import { formPage, signedIn, submit, textOf } from './pages-support.js';
import { createDeliveryWorker, firstBytes, RESPONSE_BODY_KEPT_BYTES, type DeliveryWorker } from '../../src/webhooks/worker.js';

cheapPasswordHashing();

forEachDialect('webhook delivery page', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  let developer: Browser;
  let receiver: Receiver;
  let worker: DeliveryWorker;
  let detailPath: string;

  before(async () => {
    t = await createOAuthTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    f = await createFixture(t);
    developer = await signedIn(t, f.developer);
    receiver = await startReceiver();
    worker = createDeliveryWorker(t.app.ctx, t.app.log);
    const listPage = `/dashboard/apps/${f.app.clientId}/webhooks`;
    const page = await formPage(developer, listPage);
    const added = await developer.post(listPage, { ...formFields(page.body, listPage), url: receiver.url, events: ['steps.updated'] });
    detailPath = added.location().pathname;
    await worker.runOnce();
    await receiver.waitFor('webhook.verification');
  });
  after(async () => {
    await worker.stop();
    await receiver.close();
    await t.close();
  });

  it('sends a test event to its delivery page, which reloads itself until the outcome shows', async () => {
    const sent = await submit(developer, detailPath, `${detailPath}/test`, {});
    assert.equal(sent.status, 303);
    const deliveryPath = sent.location().pathname;
    assert.match(deliveryPath, new RegExp(`^${detailPath}/deliveries/`));

    const waiting = await developer.get(deliveryPath);
    assert.equal(waiting.status, 200);
    assert.match(waiting.body, /<meta http-equiv="refresh" content="2">/);
    assert.match(textOf(waiting.body, 'delivery-waiting') ?? '', /reloads itself/);
    assert.match(waiting.body, new RegExp(`<a href="${deliveryPath}">reload it now</a>`), 'a link for a browser that does not reload');

    await worker.runOnce();
    const [delivered] = await receiver.waitFor('webhook.test');
    const done = await developer.get(deliveryPath);
    assert.doesNotMatch(done.body, /http-equiv="refresh"/, 'no more reloads once there is an outcome');
    assert.equal(textOf(done.body, 'delivery-state'), 'succeeded');
    assert.equal(textOf(done.body, 'delivery-status'), '200');
    assert.equal(textOf(done.body, 'delivery-answer'), '{"ok":true}');
    assert.deepEqual(JSON.parse(textOf(done.body, 'delivery-payload')!), JSON.parse(delivered!.body), 'the payload as it was sent');

    const log = await developer.get(detailPath);
    assert.match(log.body, new RegExp(`<a href="${deliveryPath}">`), 'the delivery log links to the page');
  });

  it("shows a failing receiver's status and answer", async () => {
    receiver.failNext(1);
    const sent = await submit(developer, detailPath, `${detailPath}/test`, {});
    await worker.runOnce();
    const page = await developer.get(sent.location().pathname);
    assert.equal(textOf(page.body, 'delivery-status'), '500');
    assert.equal(textOf(page.body, 'delivery-answer'), 'failing on purpose');
    assert.equal(textOf(page.body, 'delivery-state'), 'pending', 'to be tried again');
  });

  it('keeps 1 KB of an answer at most, never cutting a character', () => {
    assert.equal(RESPONSE_BODY_KEPT_BYTES, 1024);
    assert.equal(firstBytes('a'.repeat(2000), 1024), 'a'.repeat(1024));
    assert.equal(firstBytes(`${'a'.repeat(1023)}é`, 1024), 'a'.repeat(1023), 'é is two bytes: left out whole');
    assert.equal(firstBytes('short', 1024), 'short');
  });

  it('answers 404 for a delivery the endpoint does not have', async () => {
    assert.equal((await developer.get(`${detailPath}/deliveries/msg_none`)).status, 404);
  });
});
