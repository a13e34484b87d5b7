/**
 * The sandbox in a real browser: a new developer signs up, registers an app whose callback is the
 * test's own (it exchanges the code), adds a webhook endpoint at a real receiver, adds test people,
 * connects one through the app's real authorization request — choosing them on the consent page —
 * and the receiver hears grant.created, then steps.updated after "Sync now".
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { assertFitsTheScreen, type BrowserFlows, keepScreenshot, signUp, type Stride, ThirdPartyApp, uniqueEmail } from './support.js';

export function sandboxFlow(flows: BrowserFlows): void {
  describe('a developer connects a test person to their app, in a real browser', () => {
    let stride: Stride;
    let client: ThirdPartyApp;
    let receiver: Receiver;
    let context: BrowserContext;
    let page: Page;

    before(async () => {
      stride = flows.stride;
      client = new ThirdPartyApp(stride);
      await client.start();
      receiver = await startReceiver();
      context = await flows.browser.newContext();
      page = await context.newPage();
    });
    after(async () => {
      await context?.close();
      await client?.stop();
      await receiver?.close();
    });

    it('signs up, registers an app with a webhook endpoint, connects a test person and hears of them', async () => {
      await page.goto(`${stride.url}/dashboard`);
      await signUp(page, 'Sandbox Developer', uniqueEmail('sandbox'));
      await page.getByRole('link', { name: 'Register a new app' }).click();
      await page.getByLabel('App name').fill('Step Sandbox');
      await page.getByLabel('Redirect URIs').fill(client.redirectUri);
      await page.locator('#scope-read_activity').check();
      await page.getByRole('button', { name: 'Register app' }).click();
      await page.getByRole('heading', { name: 'Step Sandbox is registered' }).waitFor();
      client.clientId = (await page.locator('#client-id').textContent())!.trim();
      client.clientSecret = (await page.locator('#client-secret').textContent())!.trim();
      await page.getByRole('link', { name: "Continue to the app's settings" }).click();
      const appUrl = page.url();

      await page.getByRole('link', { name: 'Manage webhooks and see their delivery log' }).click();
      await page.getByLabel('URL').fill(`${receiver.url}/sandbox`);
      await page.getByRole('checkbox', { name: 'grant.created' }).check();
      await page.getByRole('checkbox', { name: 'steps.updated' }).check();
      await page.getByRole('button', { name: 'Add the endpoint' }).click();
      await receiver.waitFor('webhook.verification');

      await page.goto(`${stride.url}/dashboard`);
      await page.getByRole('link', { name: 'Test people' }).click();
      await page.getByRole('button', { name: 'Add test people' }).click();
      await page.getByRole('status').filter({ hasText: 'Your test people are ready' }).waitFor();
      const runner = page.locator('li.test-person', { hasText: 'Test runner' });
      const email = (await runner.getAttribute('data-email'))!;
      await keepScreenshot(flows, page, 'test-people');

      // The app's real request, from its page; the developer answers as the runner.
      await page.goto(appUrl);
      await page.getByRole('link', { name: 'Connect a test person' }).click();
      await page.getByRole('link', { name: 'Go to the consent page' }).click();
      await page.getByRole('heading', { name: 'Step Sandbox wants to access your Stride account' }).waitFor();
      await keepScreenshot(flows, page, 'consent-as-test-person');
      await page.getByRole('radio', { name: new RegExp(`Test runner .*${email.replace(/[.]/g, '\\.')}`) }).check();
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByRole('heading', { name: 'Connected' }).waitFor();
      const profile = (await (await client.api(client.tokens().access_token)).json()) as { id: string };
      const [created] = await receiver.waitFor('grant.created');
      assert.equal(created!.payload.data.user_id, profile.id);
      const person = profile.id;

      // A day passes; Sync now sends that day's steps to the endpoint.
      await stride.backdateSync(email, 86_400);
      await page.goto(`${stride.url}/dashboard/test-people`);
      await page.locator('li.test-person', { hasText: email }).getByRole('button', { name: 'Sync now' }).click();
      await page.getByRole('status').filter({ hasText: 'Synced' }).waitFor();
      const [steps] = await receiver.waitFor('steps.updated');
      assert.equal(steps!.payload.data.user_id, person);
      assert.ok(steps!.payload.data.ranges.length > 0);
      const types = receiver.received.map((message) => message.payload.type).filter((type) => ['grant.created', 'steps.updated'].includes(type));
      assert.deepEqual(types, ['grant.created', 'steps.updated']);
      await keepScreenshot(flows, page, 'test-people-synced');
      await page.setViewportSize({ width: 390, height: 844 });
      await assertFitsTheScreen(page);
      await keepScreenshot(flows, page, 'test-people-mobile');
    });
  });
}
