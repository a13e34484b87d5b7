/**
 * A webhook delivery's page, with a real receiver: the payload sent, the receiver's status and the
 * first 1 KB of its answer; "Send a test event" lands on its delivery's page, which reloads itself
 * (no script needed) until the receiver answered. In Chromium too: the page a developer watches
 * shows the outcome without being touched, and a page with nothing pending stays as it is.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { Browser as Chromium, BrowserContext, Page } from 'playwright-core';
import { serveDatabase, type TestApp } from '../support/app.js';
import { browserUnavailable, launchBrowser } from '../support/browser.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { createFixture, createOAuthTestApp, formFields, type Browser, type Fixture } from '../oauth/flow.js';
import { formPage, signedIn, submit, textOf } from './pages-support.js';
import { createDeliveryWorker, firstBytes, RESPONSE_BODY_KEPT_BYTES, type DeliveryWorker } from '../../src/webhooks/worker.js';

cheapPasswordHashing();

/** One Chromium for both databases' runs, launched by the first test that needs it. */
let chromium: Promise<Chromium> | undefined;
after(async () => (await chromium)?.close());

/** Counts the page's own loads from now on (its main frame's navigations), reloads included. */
function loadsOf(page: Page): () => number {
  let loads = 0;
  page.on('framenavigated', (frame) => {
    if (frame === page.mainFrame()) loads++;
  });
  return () => loads;
}

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

  it('in a browser, shows a pending delivery, then its outcome once delivered, without being touched; a page with nothing pending does not reload', { skip: browserUnavailable() ?? false }, async () => {
    // A delivery with its outcome already: its page has nothing to wait for.
    const sent = await submit(developer, detailPath, `${detailPath}/test`, {});
    await worker.runOnce();
    const deliveredPath = sent.location().pathname;
    const served = await serveDatabase(t.database, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    let context: BrowserContext | undefined;
    try {
      context = await (await (chromium ??= launchBrowser())).newContext({ viewport: { width: 1280, height: 900 } });
      const settled = await context.newPage();
      await settled.goto(`${served.url}/login`);
      await settled.getByLabel('Email').fill(f.developer.email);
      await settled.getByLabel('Password').fill(f.password);
      await settled.getByRole('button', { name: 'Sign in' }).click();
      await settled.waitForURL((url) => url.pathname === '/account');
      await settled.goto(served.url + deliveredPath);
      assert.equal(await settled.locator('#delivery-state').innerText(), 'succeeded');
      const settledLoads = loadsOf(settled);

      // Opened after it, the page of a new test event: pending until the server's worker sends it.
      const watched = await context.newPage();
      await watched.goto(served.url + detailPath);
      await watched.getByRole('button', { name: 'Send a test event' }).click();
      await watched.waitForURL((url) => url.pathname.startsWith(`${detailPath}/deliveries/`));
      assert.equal(await watched.locator('#delivery-state').innerText(), 'pending');
      assert.match(await watched.locator('#delivery-waiting').innerText(), /reloads itself/);
      const watchedLoads = loadsOf(watched);
      const before = receiver.received.length;
      // The page's server made the delivery at the real time: the worker's clock is brought to it.
      t.clock.set(Math.max(t.clock(), Math.floor(Date.now() / 1000)));
      await worker.runOnce();
      assert.ok(receiver.received.length > before, 'the receiver was sent the test event');

      // The test does nothing to the page: it reloads itself until the outcome is there.
      const shown = await watched.locator('#delivery-state', { hasText: 'succeeded' }).waitFor({ timeout: 30_000 }).then(() => true, () => false);
      assert.ok(shown, 'the page showed the outcome by itself within 30 s');
      assert.ok(watchedLoads() >= 1, 'the page loaded itself again');
      assert.equal(await watched.locator('#delivery-status').innerText(), '200');
      assert.equal(await watched.locator('#delivery-waiting').count(), 0);
      // The settled page was loaded before the watched one: had it a reload of its own, it would have come first.
      assert.equal(settledLoads(), 0, 'the page of a delivered message did not reload');
    } finally {
      await context?.close();
      await served.close();
    }
  });
});
