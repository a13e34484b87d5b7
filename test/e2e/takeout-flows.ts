/**
 * "Bring your Fitbit history" in a real browser, against a real `stride serve` whose own runner
 * carries the import: a person uploads a generated Takeout archive of the last days from the
 * account page, checks the preview, confirms, watches the page reload itself to the end, reads
 * the report, and finds the days on the "Your data" page; on a phone (390 px) and a computer
 * (1280 px).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DateTime } from 'luxon';
import type { BrowserContext, Page } from 'playwright-core';
import { datesFrom, takeoutHistory, writeTakeoutZip } from '../support/takeout-archive.js';
import { assertFitsTheScreen, type BrowserFlows, keepScreenshot, signInAsNew, uniqueEmail } from './support.js';

const WIDTHS = [390, 1280] as const;

/** Pictures of the page at a phone's and a computer's width, each checked to fit its window. */
async function atEveryWidth(flows: BrowserFlows, page: Page, name: string): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    await keepScreenshot(flows, page, `takeout/${name}-${width}`);
    await assertFitsTheScreen(page);
  }
  await page.setViewportSize({ width: 1280, height: 900 });
}

export function takeoutFlows(flows: BrowserFlows): void {
  describe('bringing a Fitbit history, in a real browser', () => {
    let context: BrowserContext;
    let page: Page;
    let folder: string;

    before(async () => {
      folder = mkdtempSync(join(tmpdir(), 'stride-takeout-e2e-'));
      context = await flows.browser.newContext({ viewport: { width: 1280, height: 900 } });
      page = await context.newPage();
    });
    after(async () => {
      await context?.close();
      rmSync(folder, { recursive: true, force: true });
    });

    it('uploads an archive, previews it, imports it to the end, reports it, and shows the days', async () => {
      // The week before last, so that "Your data" (the last 30 days) shows it.
      const first = DateTime.utc().minus({ days: 12 }).toISODate()!;
      const dates = datesFrom(first, 7);
      const archive = join(folder, 'takeout-20241201T000000Z-001.zip');
      await writeTakeoutZip(archive, takeoutHistory({ zone: 'UTC', dates, heartRateEvery: 60, weighEvery: 3, sleep: true }).files);

      await page.goto(`${flows.stride.url}/login`);
      await signInAsNew(page, flows.stride, 'Fitbit Walker', uniqueEmail('takeout'));
      await page.getByRole('heading', { name: 'Your account', exact: true }).waitFor();
      await keepScreenshot(flows, page.locator('section', { has: page.locator('#import-heading') }), 'takeout/account-section-1280');

      await page.getByLabel(/Your Takeout archive/).setInputFiles(archive);
      await page.getByRole('button', { name: 'Upload and preview' }).click();
      // The upload is answered before the archive is read: "Reading your archive…" reloads itself until the server's runner has read it.
      await page.getByRole('heading', { name: /^(Reading your Fitbit archive|Check your Fitbit archive)$/, level: 1 }).waitFor();
      await page.getByRole('heading', { name: 'Check your Fitbit archive', level: 1 }).waitFor({ timeout: 60_000 });
      const found = (await page.locator('#found').textContent())!;
      for (const kind of ['Steps', 'Heart rate', 'Sleep', 'Weight']) assert.match(found, new RegExp(kind));
      await atEveryWidth(flows, page, 'preview');

      await page.getByRole('button', { name: 'Confirm and import' }).click();
      await page.getByRole('heading', { name: 'Your Fitbit import', level: 1 }).waitFor();
      // The page reloads itself every 3 seconds while the server's runner imports the archive.
      await page.locator('#report').waitFor({ timeout: 60_000 });
      assert.match((await page.locator('#import-state').textContent())!, /Done/);
      assert.equal(await page.locator('#import-progress').getAttribute('value'), '100');
      const steps = page.locator('#report tr', { has: page.getByRole('rowheader', { name: 'Steps' }) });
      assert.equal(await steps.locator('td').first().textContent(), '7', 'days of steps imported');
      await atEveryWidth(flows, page, 'report');

      await page.getByRole('link', { name: 'See your data' }).click();
      await page.getByRole('heading', { name: 'Your data', level: 1 }).waitFor();
      await page.getByText('Steps per day as a table').click();
      const days = await page.locator('#steps-table tbody a').evaluateAll((links) => links.map((link) => link.getAttribute('href') ?? ''));
      for (const date of dates.slice(1, -1)) assert.ok(days.some((href) => href.endsWith(date)), `${date} in ${days.join(' ')}`);
      await atEveryWidth(flows, page, 'your-data');

      await page.goto(`${flows.stride.url}/account`);
      assert.match((await page.locator('#imports').textContent())!, /takeout-20241201T000000Z-001\.zip: Done/);
    });
  });
}
