/**
 * Every kind of page checked with axe-core against WCAG 2.1 A and AA (labels, contrast, landmarks,
 * names of links and buttons, …), as a person with a screen reader or low vision meets it: the
 * sign-in and sign-up pages, an error page, the dashboard, an app's page and its webhooks, the
 * consent page and the account page — in the light and the dark colour scheme; and the sign-in
 * page from the keyboard alone (the skip link, a visible focus ring, a form sent with Enter).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import type { BrowserContext, Page } from 'playwright-core';
import { type BrowserFlows, registerAppInDashboard, shotPath, signUp, type Stride, uniqueEmail } from './support.js';

export function accessibilityFlows(flows: BrowserFlows): void {
  for (const colorScheme of ['light', 'dark'] as const) describe(`accessibility of every kind of page, ${colorScheme} scheme`, () => {
    let stride: Stride;
    let context: BrowserContext;
    let page: Page;

    before(async () => {
      stride = flows.stride;
      context = await flows.browser.newContext({ colorScheme });
      page = await context.newPage();
    });
    after(() => context?.close());

    /** The WCAG 2.1 A and AA violations axe finds on the page now, one line each. */
    const violations = async () => {
      const results = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
      const where = new URL(page.url()).pathname;
      return results.violations.map((v) => `${where}: ${v.id} (${v.impact}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
    };

    it('has no WCAG 2.1 A or AA violation that axe finds', async () => {
      const found: string[] = [];
      for (const path of ['/login', '/signup', '/nope']) {
        await page.goto(`${stride.url}${path}`);
        found.push(...(await violations()));
      }
      await page.goto(`${stride.url}/signup?return_to=%2Fdashboard`);
      await signUp(page, 'Ally', uniqueEmail('ally'));
      await page.getByRole('heading', { name: 'Your apps' }).waitFor();
      found.push(...(await violations()));
      await page.goto(`${stride.url}/dashboard/apps/new`);
      found.push(...(await violations()));
      const registered = await registerAppInDashboard(page, stride, { name: 'Readable', redirectUri: 'https://readable.example/cb', scopes: ['read_profile', 'read_activity'] });
      found.push(...(await violations()));
      await page.screenshot({ path: shotPath(flows, `app-detail-${colorScheme}`), fullPage: true });
      await page.goto(`${registered.detailUrl}/webhooks`);
      found.push(...(await violations()));
      const authorize = new URL(`${stride.url}/oauth2/authorize`);
      authorize.search = new URLSearchParams({ response_type: 'code', client_id: registered.clientId, redirect_uri: 'https://readable.example/cb', state: 's' }).toString();
      await page.goto(authorize.toString());
      await page.getByRole('button', { name: 'Allow' }).waitFor();
      found.push(...(await violations()));
      await page.goto(`${stride.url}/account`);
      found.push(...(await violations()));
      assert.deepEqual(found, []);
    });

    it('works from the keyboard: a visible skip link first, a visible focus, forms sent with Enter', async () => {
      await context.clearCookies();
      await page.goto(`${stride.url}/login`);
      await page.keyboard.press('Tab');
      const focused = () => page.evaluate(() => {
        const element = document.activeElement as HTMLElement;
        const style = getComputedStyle(element);
        const box = element.getBoundingClientRect();
        return { text: element.textContent?.trim() ?? '', id: element.id, outline: style.outlineStyle, width: parseFloat(style.outlineWidth), onScreen: box.top >= 0 && box.left >= 0 && box.width > 0 };
      });
      const skip = await focused();
      assert.equal(skip.text, 'Skip to content');
      assert.ok(skip.onScreen && skip.outline !== 'none' && skip.width >= 2, `the skip link is shown with a focus ring: ${JSON.stringify(skip)}`);
      await page.keyboard.press('Enter');
      // The jump to #main is not always done when press() returns.
      await page.waitForURL(/#main$/);
      // From the top of the content on, Tab reaches the email field with a visible ring.
      for (let presses = 0; (await focused()).id !== 'email'; presses++) {
        assert.ok(presses < 10, 'the email field is reached with Tab');
        await page.keyboard.press('Tab');
      }
      const email = await focused();
      assert.ok(email.outline !== 'none' && email.width >= 2, `the field shows its focus: ${JSON.stringify(email)}`);
      await page.keyboard.type('nobody@example.com');
      await page.keyboard.press('Tab');
      await page.keyboard.type('not the password');
      await page.keyboard.press('Enter');
      await page.getByText(/email or password/i).waitFor();
    });
  });
}
