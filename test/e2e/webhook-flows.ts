/**
 * Webhooks in a real browser: a developer adds an endpoint of their app (a real receiver on
 * 127.0.0.1), copies its signing secret once, sees it verified, sends a test event that the
 * receiver checks with that secret, and finds the delivery in the log — also on a phone.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { startReceiver, type Receiver } from '../support/webhook-receiver.js';
import { assertFitsTheScreen, type BrowserFlows, registerAppInDashboard, keepScreenshot, signInAsNew, type Stride, uniqueEmail } from './support.js';

export function webhookFlows(flows: BrowserFlows): void {
  describe('webhooks in a real browser', () => {
    let stride: Stride;
    let receiver: Receiver;
    let context: BrowserContext;
    let page: Page;

    before(async () => {
      stride = flows.stride;
      receiver = await startReceiver();
      context = await flows.browser.newContext();
      page = await context.newPage();
      await page.goto(`${stride.url}/login?return_to=%2Fdashboard`);
      await signInAsNew(page, stride, 'Hook Developer', uniqueEmail('hooks'));
      await page.getByRole('heading', { name: 'Your apps' }).waitFor();
    });
    after(async () => {
      await context?.close();
      await receiver?.close();
    });

    it('adds an endpoint, verifies it, and delivers a signed test event shown in the log', async () => {
      const registered = await registerAppInDashboard(page, stride, { name: 'Hooked', redirectUri: 'https://hooked.example/cb', scopes: ['read_activity'] });
      await page.goto(registered.detailUrl);
      await page.getByRole('link', { name: 'Manage webhooks and see their delivery log' }).click();
      await page.getByRole('heading', { name: 'Webhooks' }).waitFor();
      // A long path, as real endpoints have: the page must still fit a phone.
      const url = `${receiver.url}/stride/${'events'.repeat(8)}`;
      await page.getByLabel('URL').fill(url);
      await page.getByRole('checkbox', { name: 'steps.updated' }).check();
      await page.getByRole('button', { name: 'Add the endpoint' }).click();
      await page.getByText('It is shown only this once').waitFor();
      const secret = (await page.locator('#webhook-secret').textContent())!.trim();
      assert.match(secret, /^whsec_/);
      const endpointUrl = page.url();

      // The receiver answers the challenge; the endpoint is active then.
      await receiver.waitFor('webhook.verification');
      for (let tries = 0; ; tries++) {
        await page.goto(endpointUrl);
        if ((await page.locator('#state-heading').textContent())!.includes('active')) break;
        assert.ok(tries < 40, 'the endpoint became active');
        await page.waitForTimeout(250);
      }
      assert.equal(await page.locator('#webhook-secret').count(), 0, 'the secret is not shown again');
      await page.getByRole('status').filter({ hasText: 'answered the verification challenge' }).waitFor();

      await page.getByRole('button', { name: 'Send a test event' }).click();
      const [message] = await receiver.waitFor('webhook.test');
      assert.ok(receiver.verifies(message!, secret), 'signed with the secret the page showed');
      for (let tries = 0; ; tries++) {
        await page.goto(endpointUrl);
        const row = page.locator('table.log tbody tr', { hasText: 'webhook.test' });
        if ((await row.count()) === 1 && /\b200\b/.test((await row.textContent())!)) break;
        assert.ok(tries < 40, 'the delivery shows in the log with status 200');
        await page.waitForTimeout(250);
      }
      await keepScreenshot(flows, page, 'webhook-endpoint');
      await page.setViewportSize({ width: 390, height: 844 });
      await assertFitsTheScreen(page);
      await keepScreenshot(flows, page, 'webhook-endpoint-mobile');
      // The list, whose card shows the long URL, fits the phone too.
      await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
      await page.getByRole('heading', { name: 'Add an endpoint' }).waitFor();
      await assertFitsTheScreen(page);
      await keepScreenshot(flows, page, 'webhooks-mobile');
    });
  });
}
