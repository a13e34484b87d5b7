/**
 * The webhook pages of the dashboard: add (secret once, no duplicate on a second send), change,
 * pause and resume, test event, the delivery log with Redeliver, rotation, deletion, the failing
 * state at a glance, and nobody else's endpoints.
 */
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import type { TestApp } from '../support/app.js';
import { forEachDialect } from '../support/databases.js';
import { cheapPasswordHashing } from '../support/passwords.js';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { Browser, createFixture, createOAuthTestApp, formFields, type Fixture } from '../oauth/flow.js';
import { formPage, newAccount, signedIn, submit, textOf } from './pages-support.js';
import { addEndpoint } from '../../src/webhooks/endpoints.js';
import { createDeliveryWorker, type DeliveryWorker } from '../../src/webhooks/worker.js';

cheapPasswordHashing();

forEachDialect('webhook pages', (dialect) => {
  let t: TestApp;
  let f: Fixture;
  let developer: Browser;
  let receiver: Receiver;
  let worker: DeliveryWorker;
  const listPage = () => `/dashboard/apps/${f.app.clientId}/webhooks`;

  before(async () => {
    t = await createOAuthTestApp(dialect, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    f = await createFixture(t);
    developer = await signedIn(t, f.developer);
    receiver = await startReceiver();
    worker = createDeliveryWorker(t.app.ctx, t.app.log);
  });
  after(async () => {
    await worker.stop();
    await receiver.close();
    await t.close();
  });

  it('adds an endpoint, shows its secret once, and makes no second one when the form is sent again', async () => {
    const page = await formPage(developer, listPage());
    assert.equal(page.status, 200);
    const form = { ...formFields(page.body, listPage()), url: receiver.url, events: ['steps.updated', 'grant.revoked'] };
    const added = await developer.post(listPage(), form);
    assert.equal(added.status, 303);
    const detailPath = added.location().pathname;
    const shown = await developer.get(`${detailPath}?done=added`);
    const secret = textOf(shown.body, 'webhook-secret');
    assert.match(String(secret), /^whsec_/);
    const reload = await developer.get(`${detailPath}?done=added`);
    assert.equal(textOf(reload.body, 'webhook-secret'), undefined, 'a reload shows no secret');
    assert.match(reload.body, /shown once/);

    const again = await developer.post(listPage(), form);
    assert.equal(again.location().pathname, detailPath, 'the same form names the endpoint it made');
    assert.equal((await t.app.ctx.stores.webhooks.list(f.app.id)).length, 1);

    // Verified, then a test event is delivered and logged.
    await worker.runOnce();
    await receiver.waitFor('webhook.verification');
    const test = await submit(developer, detailPath, `${detailPath}/test`, {});
    assert.equal(test.status, 303);
    await worker.runOnce();
    const [delivered] = await receiver.waitFor('webhook.test');
    assert.ok(receiver.verifies(delivered!, secret!));
    const log = await developer.get(detailPath);
    assert.match(log.body, /webhook\.test/);
    assert.match(log.body, />200 in \d+ ms</);

    const deliveryId = /name="delivery_id" value="([^"]+)"/.exec(log.body)![1]!;
    const redeliver = await developer.post(`${detailPath}/redeliver`, { ...formFields(log.body, `${detailPath}/redeliver`), delivery_id: deliveryId });
    assert.equal(redeliver.status, 303);
    await worker.runOnce();
    assert.equal((await receiver.waitFor('webhook.test', 2)).length, 2, 'sent again');
  });

  it('makes one endpoint when the add form is sent several times at once (a double click)', async () => {
    const before = (await t.app.ctx.stores.webhooks.list(f.app.id)).length;
    const page = await formPage(developer, listPage());
    const form = { ...formFields(page.body, listPage()), url: `${receiver.url}/twice`, events: ['steps.updated'] };
    const answers = await Promise.all(Array.from({ length: 5 }, () => developer.post(listPage(), form)));
    assert.deepEqual(answers.map((answer) => answer.status), [303, 303, 303, 303, 303]);
    assert.equal(new Set(answers.map((answer) => answer.location().pathname)).size, 1, 'every answer names the one endpoint');
    const endpoints = await t.app.ctx.stores.webhooks.list(f.app.id);
    assert.equal(endpoints.length, before + 1);
    // The tests below work on the app's first, verified endpoint.
    for (const endpoint of endpoints) if (endpoint.url === form.url) await t.app.ctx.stores.webhooks.delete(endpoint.id);
  });

  it('refuses a bad URL or no events with the form kept, and adds nothing', async () => {
    const before = (await t.app.ctx.stores.webhooks.list(f.app.id)).length;
    for (const [fields, message] of [
      [{ url: 'ftp://x.example/hook', events: ['steps.updated'] }, /http/],
      [{ url: receiver.url, events: [] as string[] }, /at least one event type/],
    ] as const) {
      const response = await submit(developer, listPage(), listPage(), fields as Record<string, string | string[]>);
      assert.equal(response.status, 400);
      assert.match(response.body, message);
    }
    assert.equal((await t.app.ctx.stores.webhooks.list(f.app.id)).length, before);
  });

  it('pauses, resumes, rotates and deletes; the dashboard shows a failing endpoint at a glance', async () => {
    const [endpoint] = await t.app.ctx.stores.webhooks.list(f.app.id);
    const path = `${listPage()}/${endpoint!.id}`;
    assert.equal((await submit(developer, path, `${path}/pause`, {})).status, 303);
    assert.equal((await t.app.ctx.stores.webhooks.find(endpoint!.id))!.state, 'paused');
    assert.equal((await submit(developer, path, `${path}/resume`, {})).status, 303);
    assert.equal((await t.app.ctx.stores.webhooks.find(endpoint!.id))!.state, 'active');
    await submit(developer, path, `${path}/rotate-secret`, {});
    const rotated = await developer.get(path);
    assert.match(String(textOf(rotated.body, 'webhook-secret')), /^whsec_/);
    assert.notEqual(textOf(rotated.body, 'webhook-secret'), endpoint!.secret);

    await t.database.db.kysely.updateTable('webhook_endpoints').set({ state: 'failing' }).where('id', '=', endpoint!.id).execute();
    assert.match((await developer.get('/dashboard')).body, /1 failing/);
    assert.match((await developer.get(`/dashboard/apps/${f.app.clientId}`)).body, /1 failing/);

    const deleted = await submit(developer, path, `${path}/delete`, {});
    assert.equal(deleted.location().pathname, listPage());
    assert.equal(await t.app.ctx.stores.webhooks.find(endpoint!.id), undefined);
  });

  it('shows nobody else the endpoints, and refuses a form without its CSRF token', async () => {
    const endpoint = await addEndpoint(t.app.ctx.stores.webhooks, t.config, f.app.id, { url: receiver.url, events: ['steps.updated'] }, t.clock());
    const stranger = await signedIn(t, await newAccount(t, 'Stranger'));
    assert.equal((await stranger.get(listPage())).status, 404);
    assert.equal((await stranger.get(`${listPage()}/${endpoint.id}`)).status, 404);
    assert.equal((await stranger.post(`${listPage()}/${endpoint.id}/delete`, { csrf_token: 'x' })).status, 403);
    assert.equal((await developer.post(`${listPage()}/${endpoint.id}/delete`, {})).status, 403);
    assert.ok(await t.app.ctx.stores.webhooks.find(endpoint.id));
  });

  it('answers an endpoint id with a NUL as no such endpoint, on its page and its forms; redelivers nothing for a delivery id with one', async () => {
    // PostgreSQL refuses a NUL in a text value: an id with one that reached a statement answered 500.
    const endpoint = await addEndpoint(t.app.ctx.stores.webhooks, t.config, f.app.id, { url: receiver.url, events: ['steps.updated'] }, t.clock());
    const page = await formPage(developer, `${listPage()}/${endpoint.id}`);
    const fields = formFields(page.body, `${listPage()}/${endpoint.id}`);
    for (const id of ['%00', `${endpoint.id}%00`, 'we_%00%01']) {
      const path = `${listPage()}/${id}`;
      assert.equal((await developer.get(path)).status, 404, path);
      assert.equal((await developer.post(path, { ...fields, url: receiver.url, events: 'steps.updated' })).status, 404, path);
      for (const action of ['pause', 'test', 'rotate-secret', 'redeliver', 'delete']) assert.equal((await developer.post(`${path}/${action}`, fields)).status, 404, `${path}/${action}`);
    }
    assert.ok(await t.app.ctx.stores.webhooks.find(endpoint.id));
    // A delivery id that names nothing, with a NUL or not: the same answer.
    for (const deliveryId of ['\u0000', 'msg_\u0000', `msg_${'0'.repeat(32)}`]) {
      const redeliver = await developer.post(`${listPage()}/${endpoint.id}/redeliver`, { ...fields, delivery_id: deliveryId });
      assert.equal(redeliver.status, 303, `${JSON.stringify(deliveryId)}: ${redeliver.body.slice(0, 300)}`);
    }
  });
});
