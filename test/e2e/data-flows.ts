/**
 * The "Your data" pages in a real browser: a person with a hundred days of data opens them from the
 * account page, looks at 30, 90 and 365 days and then at one day — chosen by clicking its bar — on
 * a phone (390 px) and a computer (1280 px), in the light and the dark scheme. No element is wider
 * than the window, every text of a chart is at least 11 px as drawn, axe finds nothing; a new person
 * is told how data arrives; a developer opens a test person's data from the test people page.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AxeBuilder } from '@axe-core/playwright';
import type { BrowserContext, Page } from 'playwright-core';
import { assertFitsTheScreen, type BrowserFlows, keepScreenshot, signInAsNew, type Stride, uniqueEmail } from './support.js';

const WIDTHS = [390, 1280] as const;
const SCHEMES = ['light', 'dark'] as const;
/** The smallest chart text a person should have to read, in CSS pixels as drawn. */
const SMALLEST_CHART_TEXT = 11;

/** Every element's width that passes the window's, one line each. */
async function widerThanTheWindow(page: Page): Promise<string[]> {
  return page.evaluate(() =>
    [...document.querySelectorAll('body *')].flatMap((element) => {
      const box = element.getBoundingClientRect();
      const name = `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''}`;
      return box.width > window.innerWidth + 0.5 ? [`${name}: ${Math.round(box.width)} px in ${window.innerWidth}`] : [];
    }),
  );
}

/** Each chart text's size as drawn (its font size times the SVG's scale), and whether it lies within the window. */
async function chartTexts(page: Page): Promise<Array<{ text: string; px: number; inside: boolean }>> {
  return page.evaluate(() =>
    [...document.querySelectorAll<SVGTextElement>('svg.data-chart text')].map((text) => {
      const ctm = text.getScreenCTM()!;
      const box = text.getBoundingClientRect();
      return {
        text: text.textContent ?? '',
        px: parseFloat(getComputedStyle(text).fontSize) * Math.hypot(ctm.b, ctm.d),
        inside: box.left >= -0.5 && box.right <= window.innerWidth + 0.5,
      };
    }),
  );
}

/** The page as a phone and a computer show it, in both schemes: nothing too wide, chart text large enough; a screenshot of each. */
async function checkEveryWay(flows: BrowserFlows, page: Page, name: string, charts: { atLeast: number }): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    for (const colorScheme of SCHEMES) {
      await page.emulateMedia({ colorScheme });
      await keepScreenshot(flows, page, `data/${name}-${width}-${colorScheme}`);
    }
    // The tables behind the charts, opened, fit too.
    await page.emulateMedia({ colorScheme: 'light' });
    await page.$$eval('details', (all) => all.forEach((details) => ((details as HTMLDetailsElement).open = true)));
    if (width === 390) await keepScreenshot(flows, page, `data/${name}-${width}-tables`);
    assert.deepEqual(await widerThanTheWindow(page), [], `${name} at ${width} px`);
    await assertFitsTheScreen(page);
    await page.$$eval('details', (all) => all.forEach((details) => ((details as HTMLDetailsElement).open = false)));
    const texts = await chartTexts(page);
    const drawn = await page.locator('svg.data-chart').count();
    assert.ok(drawn >= charts.atLeast, `${name}: ${drawn} charts`);
    assert.ok(texts.length >= drawn * 3, `${name}: labels on the charts`);
    const small = texts.filter((text) => text.px < SMALLEST_CHART_TEXT).map((text) => `"${text.text}" at ${text.px.toFixed(1)} px`);
    assert.deepEqual(small, [], `${name} at ${width} px: chart text smaller than ${SMALLEST_CHART_TEXT} px`);
    assert.deepEqual(texts.filter((text) => !text.inside).map((text) => text.text), [], `${name} at ${width} px: chart text outside the window`);
  }
}

/** What axe finds on the page against WCAG 2.1 A and AA, in the light scheme and the colours in the dark one. */
async function axeViolations(page: Page): Promise<string[]> {
  const found: string[] = [];
  for (const colorScheme of SCHEMES) {
    await page.emulateMedia({ colorScheme });
    const axe = new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).setLegacyMode(true);
    const results = await (colorScheme === 'dark' ? axe.withRules(['color-contrast', 'link-in-text-block']) : axe).analyze();
    found.push(...results.violations.map((v) => `${new URL(page.url()).pathname} (${colorScheme}): ${v.id} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`));
  }
  await page.emulateMedia({ colorScheme: 'light' });
  return found;
}

export function dataFlows(flows: BrowserFlows): void {
  describe('your data in charts, in a real browser', () => {
    let stride: Stride;
    let context: BrowserContext;
    let page: Page;

    before(async () => {
      stride = flows.stride;
      context = await flows.browser.newContext({ viewport: { width: 1280, height: 900 } });
      page = await context.newPage();
    });
    after(() => context?.close());

    it('shows a person their days, and a day by the minute, on a phone and a computer, light and dark', async () => {
      const email = uniqueEmail('charted');
      await page.goto(`${stride.url}/login`);
      await signInAsNew(page, stride, 'Charted', email);
      await stride.writeLife(email, 'office_worker', 100);
      await page.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
      // The account page's downloads, a CSV per kind with its columns, fit a phone too.
      await page.setViewportSize({ width: 390, height: 844 });
      assert.deepEqual(await widerThanTheWindow(page), []);
      await keepScreenshot(flows, page.locator('section', { has: page.locator('#export-heading') }), 'data/account-downloads-390');
      await page.getByRole('link', { name: 'See your data', exact: true }).click();
      await page.getByRole('heading', { name: 'Your data', level: 1 }).waitFor();
      await checkEveryWay(flows, page, 'overview-30', { atLeast: 4 });
      const found = flows.dialect === 'sqlite' ? await axeViolations(page) : [];

      for (const days of [90, 365]) {
        await page.getByRole('link', { name: `Last ${days} days` }).click();
        await page.waitForURL(new RegExp(`days=${days}$`));
        await checkEveryWay(flows, page, `overview-${days}`, { atLeast: 4 });
      }

      // A bar of the steps chart leads to its day; the day's table links do too.
      await page.getByRole('link', { name: 'Last 30 days' }).click();
      await page.waitForURL(/days=30$/);
      const bar = page.locator('#steps-chart + .chart-links a').nth(25);
      const href = (await bar.getAttribute('href'))!;
      await bar.click();
      await page.waitForURL(new RegExp(`${href}$`));
      await page.getByRole('heading', { name: 'Steps per minute' }).waitFor();
      await checkEveryWay(flows, page, 'day', { atLeast: 2 });
      if (flows.dialect === 'sqlite') found.push(...(await axeViolations(page)));
      await page.getByRole('link', { name: 'Previous day' }).click();
      await page.getByRole('heading', { name: 'Heart rate per minute' }).waitFor();
      await page.getByRole('link', { name: 'Your data' }).first().click();
      await page.getByText('Steps per day as a table').click();
      const firstDay = page.locator('#steps-table tbody a').first();
      const firstHref = (await firstDay.getAttribute('href'))!;
      await firstDay.click();
      await page.waitForURL(new RegExp(`${firstHref}$`));
      assert.deepEqual(found, []);
    });

    it('tells a new person how data arrives, instead of empty charts', async () => {
      const newcomer = await flows.browser.newContext({ viewport: { width: 390, height: 844 } });
      try {
        const fresh = await newcomer.newPage();
        await fresh.goto(`${stride.url}/login?return_to=%2Faccount%2Fdata`);
        await signInAsNew(fresh, stride, 'Newcomer', uniqueEmail('newcomer'));
        await fresh.locator('#data-empty').waitFor();
        assert.match((await fresh.locator('#data-empty').textContent())!, /an app you connect uploads it/);
        await checkEveryWay(flows, fresh, 'empty', { atLeast: 0 });
      } finally {
        await newcomer.close();
      }
    });

    it('shows a developer the data of their test person from the test people page', async () => {
      const developer = await flows.browser.newContext({ viewport: { width: 1280, height: 900 } });
      try {
        const dashboard = await developer.newPage();
        await dashboard.goto(`${stride.url}/login?return_to=%2Fdashboard%2Ftest-people`);
        await signInAsNew(dashboard, stride, 'Chart Developer', uniqueEmail('chart-developer'));
        await dashboard.getByRole('button', { name: 'Add test people' }).click();
        await dashboard.getByRole('status').filter({ hasText: 'Your test people are ready' }).waitFor();
        const runner = dashboard.locator('li.test-person', { hasText: 'Test runner' });
        await keepScreenshot(flows, dashboard, 'data/test-people-list');
        await runner.getByRole('link', { name: /^See data of Test runner/ }).click();
        await dashboard.getByRole('heading', { name: /^Data of Test runner/, level: 1 }).waitFor();
        await checkEveryWay(flows, dashboard, 'test-person', { atLeast: 2 });
      } finally {
        await developer.close();
      }
    });
  });
}
