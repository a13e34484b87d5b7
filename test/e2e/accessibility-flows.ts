/**
 * Every kind of page checked with axe-core against WCAG 2.1 A and AA (labels, contrast, landmarks,
 * names of links and buttons, …), as a person with a screen reader or low vision meets it: the
 * sign-in and sign-up pages (the latter with its field errors, and from an app's request), error
 * pages, the dashboard, an app's page and its webhooks, the consent page and the account page — in
 * the light colour scheme, and again in the dark one for what the scheme changes, the colours
 * (the pages' markup is the same in both; stride.css changes only colours); and the sign-in page
 * from the keyboard alone (the skip link, a visible focus ring, a form sent with Enter), in both.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import type { BrowserContext, Page } from 'playwright-core';
import { type BrowserFlows, registerAppInDashboard, keepScreenshot, signInAsNew, type Stride, uniqueEmail } from './support.js';

/** What the dark scheme can change: the colours of text, links and their surroundings. */
const COLOUR_RULES = ['color-contrast', 'link-in-text-block'];

export function accessibilityFlows(flows: BrowserFlows): void {
  describe('accessibility of every kind of page, in the light and the dark scheme', () => {
    let stride: Stride;
    let context: BrowserContext;
    let page: Page;

    before(async () => {
      stride = flows.stride;
      context = await flows.browser.newContext({ colorScheme: 'light' });
      page = await context.newPage();
    });
    after(() => context?.close());

    /** The violations axe finds on the page now, one line each: every WCAG 2.1 A and AA rule in light, the colour rules in dark. */
    const violations = async () => {
      const where = new URL(page.url()).pathname;
      const found: string[] = [];
      for (const colorScheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme });
        // Legacy mode runs axe in the page alone: the default opens a second page for every run to
        // merge the results of cross-origin frames, which Stride's pages do not have (and refuse to
        // be, frame-ancestors 'none') — about half a second a run, some 25 runs.
        const axe = new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).setLegacyMode(true);
        const results = await (colorScheme === 'dark' ? axe.withRules(COLOUR_RULES) : axe).analyze();
        found.push(...results.violations.map((v) => `${where} (${colorScheme}): ${v.id} (${v.impact}) at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`));
      }
      await page.emulateMedia({ colorScheme: 'light' });
      return found;
    };

    it('has no WCAG 2.1 A or AA violation that axe finds', async () => {
      const found: string[] = [];
      for (const path of ['/login', '/signup', '/nope']) {
        await page.goto(`${stride.url}${path}`);
        found.push(...(await violations()));
      }
      // Sign-up with a problem in every field, each shown next to its field.
      await page.goto(`${stride.url}/signup`);
      await page.getByLabel('Email').fill('not an address');
      await page.getByLabel(/^Password/).fill('short');
      await page.getByRole('button', { name: 'Create account' }).click();
      await page.locator('#password-error').waitFor();
      found.push(...(await violations()));
      await page.goto(`${stride.url}/login?return_to=%2Fdashboard`);
      await signInAsNew(page, stride, 'Ally', uniqueEmail('ally'));
      await page.getByRole('heading', { name: 'Your apps' }).waitFor();
      found.push(...(await violations()));
      await page.goto(`${stride.url}/dashboard/apps/new`);
      found.push(...(await violations()));
      const registered = await registerAppInDashboard(page, stride, { name: 'Readable', redirectUri: 'https://readable.example/cb', scopes: ['read_profile', 'read_activity'] });
      found.push(...(await violations()));
      await keepScreenshot(flows, page, 'app-detail');
      await page.goto(`${registered.detailUrl}/webhooks`);
      found.push(...(await violations()));
      // The test people's page, with its cards; with test people, the consent page below asks who answers.
      await page.goto(`${stride.url}/dashboard/test-people`);
      await page.getByRole('button', { name: 'Add test people' }).click();
      await page.getByRole('status').filter({ hasText: 'Your test people are ready' }).waitFor();
      found.push(...(await violations()));
      const authorize = new URL(`${stride.url}/oauth2/authorize`);
      authorize.search = new URLSearchParams({ response_type: 'code', client_id: registered.clientId, redirect_uri: 'https://readable.example/cb', state: 's' }).toString();
      await page.goto(authorize.toString());
      await page.getByRole('button', { name: 'Allow' }).waitFor();
      await page.getByRole('group', { name: 'Who answers?' }).waitFor();
      found.push(...(await violations()));
      // An authorization request that cannot go back to its app: an error page with ways on.
      authorize.searchParams.set('redirect_uri', 'https://elsewhere.example/cb');
      await page.goto(authorize.toString());
      await page.locator('#app-settings').waitFor();
      found.push(...(await violations()));
      await page.goto(`${stride.url}/account`);
      found.push(...(await violations()));
      // The sign-in page an app's request leads to, naming the app.
      await context.clearCookies();
      await page.goto(`${stride.url}/login?return_to=${encodeURIComponent(`/oauth2/authorize?client_id=${registered.clientId}`)}`);
      await page.locator('#asking-app').waitFor();
      found.push(...(await violations()));
      assert.deepEqual(found, []);
    });

    for (const colorScheme of ['light', 'dark'] as const) {
      it(`works from the keyboard in the ${colorScheme} scheme: a visible skip link first, a visible focus, forms sent with Enter`, async () => {
        await context.clearCookies();
        await page.emulateMedia({ colorScheme });
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
    }
  });
}
